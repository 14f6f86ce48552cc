// Chapter 07: what the four runners share (command line, the one main of the array runners,
// inputs, timing, the grid for grid-stride kernels, the ladder's table).
// The lesson is in the step files; this is plumbing that is not part of any one step.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <tutorial/check.cuh>
#include <tutorial/device.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>
#include <vector>

namespace lab {

/// The most elements the array runners accept. Their kernels index with int on purpose (fewer
/// instructions per element than 64-bit math): a grid-stride index i < n plus one stride of a
/// grid that fills the GPU once stays far below 2^31 when n <= 2^30.
constexpr int kMaxElements = 1 << 30;
static_assert(int64_t(kMaxElements) * 2 <= (int64_t(1) << 31), "int indices: i + stride must stay below 2^31");

/// The command line of the runners over one array of --n floats (elementwise, reduction, fusion).
struct ArrayOptions {
  int n = 0;
  int runs = 0;
  int step = 0;  // 0: every step
  bool check_only = false;
};

/// Parses and validates --n, --runs, --check-only and, where \p steps > 0, --step (1..steps):
/// before the GPU is touched, so bad usage exits with 2 even on a machine without one.
inline ArrayOptions parse_array_options(int argc, char** argv, const char* program,
                                        const char* description, int default_n, int steps = 0) {
  tutorial::Cli cli(program, description);
  cli.add_int("n", "number of elements", default_n, 1, kMaxElements);
  cli.add_int("runs", "timed runs per step (the median is reported)", 20, 1, 1000);
  if (steps > 0)
    cli.add_int("step", tutorial::format("run only this step (1-%d; 0: all)", steps), 0, 0, steps);
  cli.add_flag("check-only", "verify every step, time nothing");
  cli.parse_or_exit(argc, argv);
  ArrayOptions options;
  options.n = static_cast<int>(cli.get_int("n"));
  options.runs = static_cast<int>(cli.get_int("runs"));
  options.step = steps > 0 ? static_cast<int>(cli.get_int("step")) : 0;
  options.check_only = cli.get_flag("check-only");
  return options;
}

/// What every array runner does once its options are valid: find a usable GPU (exit 77 if
/// there is none) with room for \p arrays arrays of --n floats, plus the two arrays of the
/// device-to-device copy that is the limit when the run is timed.
inline void require_gpu_for(const ArrayOptions& options, double arrays, const char* what) {
  tutorial::require_gpu();
  const double copy = options.check_only ? 0 : 2;
  tutorial::require_device_memory(
      static_cast<size_t>((arrays + copy) * double(options.n) * sizeof(float)),
      tutorial::format("%s%s of --n floats", what, options.check_only ? "" : " and a copy").c_str());
}

/// What an array runner is, for run_steps.
struct ArrayLab {
  const char* program;
  const char* description;
  int default_n;
  double arrays;            // device arrays of --n floats it needs (besides the timed copy's two)
  const char* arrays_what;  // what they are, for the message when they do not fit
  int steps = 0;            // > 0: --step runs one of steps 1..steps
};

/// One run of an array runner: its options, its checks and figures, and the limit it is timed against.
struct ArrayRun {
  ArrayOptions options;
  tutorial::Verifier verifier;
  bool timed() const { return !options.check_only; }
  /// A device-to-device cudaMemcpy of --n floats, timed now: the limit a memory-bound step meets.
  double copy_gbs() const {
    return tutorial::copy_bandwidth_gbs(size_t(options.n) * sizeof(float), {3, options.runs});
  }
};

/// The one main of the array runners (elementwise, reduction, fusion): the command line and a GPU
/// with room are settled first (exit 2 or 77 before anything runs), then \p lesson(run) verifies
/// every step and, when run.timed(), times them; the SUMMARY line ends the output, and its verdict
/// is the exit code.
template <typename Lesson>
int run_steps(int argc, char** argv, const ArrayLab& lab, Lesson&& lesson) {
  ArrayRun run{parse_array_options(argc, argv, lab.program, lab.description, lab.default_n, lab.steps), {}};
  require_gpu_for(run.options, lab.arrays, lab.arrays_what);
  lesson(run);
  return run.verifier.finish(lab.program);
}

/// A step of a runner: its name, which starts with its number ("3 float4, grid-stride"), and its
/// launcher.
template <typename Launch>
struct Step {
  const char* name;
  Launch launch;
};

/// "8a" from "8a double buffering": the step's number, as the SUMMARY figures' keys use it.
inline std::string step_number(const std::string& name) { return name.substr(0, name.find(' ')); }

/// A ladder's table: the runner's columns, then each step's cumulative speed-up, step 1's time
/// over this step's (Harris's reduction table has the same column). Each speed-up is also a
/// SUMMARY figure, step<N>_speedup_cumulative, for a README to quote beside the step. The limit's
/// rows (the copy, CUB, cuBLAS) have none, nor has any step when step 1 did not run (--step).
class Ladder {
 public:
  explicit Ladder(std::vector<std::string> columns) : table_(with_speedup(std::move(columns))) {}
  void add_limit(std::vector<std::string> cells) {
    cells.push_back("");
    table_.add_row(std::move(cells));
  }
  /// \p cells: the step's row without its speed-up; the first cell is the step's name.
  void add_step(double ms, std::vector<std::string> cells, tutorial::Verifier& verifier) {
    const std::string number = step_number(cells.front());
    if (number == "1") step1_ms_ = ms;
    std::string speedup = "-";
    if (step1_ms_ > 0) {
      const double times = step1_ms_ / ms;
      const double shown = times < 10 ? std::round(100 * times) / 100 : std::round(10 * times) / 10;
      speedup = tutorial::format(times < 10 ? "%.2fx" : "%.1fx", shown);
      verifier.figure("step" + number + "_speedup_cumulative", shown);
    }
    cells.push_back(speedup);
    table_.add_row(std::move(cells));
  }
  void print() const { table_.print(); }

 private:
  static std::vector<std::string> with_speedup(std::vector<std::string> columns) {
    columns.push_back("Speed-up, cumulative");
    return columns;
  }
  tutorial::Table table_;
  double step1_ms_ = 0.0;
};

// A counter-based generator (splitmix64): value i depends only on (seed, i), so filling a
// 2^28-element array is fast and every run sees the same inputs.
inline uint64_t mix(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Whole numbers lo..hi (inclusive), stored as float: sums of a few of them are exact.
inline std::vector<float> small_integers(size_t n, int lo, int hi, uint64_t seed) {
  std::vector<float> v(n);
  const uint64_t span = static_cast<uint64_t>(hi - lo + 1);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(lo + static_cast<int>(mix(seed, i) % span));
  return v;
}

/// Uniform floats in [lo, hi).
inline std::vector<float> uniform(size_t n, float lo, float hi, uint64_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(mix(seed, i) >> 11) * 0x1.0p-53;  // [0, 1)
    v[i] = static_cast<float>(lo + (hi - lo) * u);
  }
  return v;
}

/// Enough blocks of \p block_size threads to fill every SM once, for a grid-stride kernel:
/// more would only queue behind the first wave, fewer would leave SMs idle.
/// The answer depends on the kernel, the block size and the device, so it is cached under all
/// three: launchers call this on every launch, and a later cudaSetDevice gets a fresh answer.
template <typename Kernel>
int resident_blocks(Kernel kernel, int block_size) {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  static std::map<std::tuple<const void*, int, int>, int> cache;
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), block_size, device);
  if (const auto hit = cache.find(key); hit != cache.end()) return hit->second;
  int sms = 0, per_sm = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_size, 0));
  return cache[key] = sms * std::max(per_sm, 1);
}

/// Blocks for a grid-stride kernel over \p work items, \p per_block per block: never more than
/// fill the GPU once, never more than the work needs, at least one.
inline int grid_for(long long work, int per_block, int resident) {
  const long long needed = (work + per_block - 1) / per_block;
  return static_cast<int>(std::max(1LL, std::min<long long>(needed, resident)));
}

/// Times one step. The first run is a probe (and a warm-up): a step that takes 0.5 s a run
/// (naive SGEMM at 4096) gets a few runs, a fast one up to \p max_runs; the median is reported.
template <typename Launch>
tutorial::Timing time_step(Launch&& launch, int max_runs, double budget_ms = 1500.0) {
  tutorial::EventTimer probe;
  probe.start();
  launch();
  probe.stop();
  const double once = probe.elapsed_ms();
  tutorial::TimingPlan plan;
  plan.warmup = once > 20.0 ? 0 : 3;
  plan.runs = static_cast<int>(
      std::clamp(budget_ms / std::max(once, 1e-3), double(std::min(3, max_runs)), double(max_runs)));
  return tutorial::time_gpu(launch, plan);
}

/// How many timed runs a batch of \p launch needs to last \p batch_ms (within [at_least, at_most]),
/// from one probing run: the races' batches (07_sgemm, 07_tensor_cores).
template <typename Launch>
int batch_runs(Launch&& launch, double batch_ms, int at_least, int at_most) {
  tutorial::EventTimer probe;
  probe.start();
  launch();
  probe.stop();
  const double once = std::max(double(probe.elapsed_ms()), 1e-3);
  return int(std::clamp(std::ceil(batch_ms / once), double(at_least), double(at_most)));
}

/// The race's order of rows 1..count-1 in round \p round: shuffled, the same in every run.
inline std::vector<size_t> round_order(size_t count, int round) {
  std::vector<size_t> order(count - 1);
  for (size_t i = 0; i < order.size(); ++i) order[i] = i + 1;
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[mix(round, i) % i]);
  return order;
}

/// "97.3%"
inline std::string percent(double part, double whole) {
  return tutorial::format("%.1f%%", 100.0 * part / whole);
}

}  // namespace lab
