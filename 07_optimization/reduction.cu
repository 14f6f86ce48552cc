// Chapter 07, part 2: a sum over 2^28 floats, following Harris's "Optimizing Parallel Reduction",
// step by step against CUB's DeviceReduce::Sum measured in the same run.
//
// Two checks per step, each on a poisoned output:
//  - exact: inputs in {-1, 0, +1} with at most 2^24 of them non-zero. Every partial sum, in any
//    order of addition, is then a whole number of size <= 2^24, which float holds exactly: the
//    GPU's answer must equal the host's to the last bit, whatever tree the kernel uses.
//  - random: uniform [0, 1) inputs against a float64 sum on the host, relative tolerance 1e-5
//    (float's rounding error, 6e-8 per add, grows with the length of each thread's serial chain).
// The timed runs use the random inputs, at full size.
#include <cmath>
#include <cstdio>
#include <cub/cub.cuh>
#include <tutorial/buffer.cuh>
#include <tutorial/device.cuh>
#include <tutorial/verify.hpp>

#include "lab.cuh"
#include "reduction/01_interleaved_divergent.cuh"
#include "reduction/02_interleaved_strided.cuh"
#include "reduction/03_sequential.cuh"
#include "reduction/04_first_add_during_load.cuh"
#include "reduction/05_warp_shuffle.cuh"
#include "reduction/06_grid_stride.cuh"
#include "reduction/07_single_pass.cuh"

namespace {

using reduction::Scratch;

// Sums in[0, n) into *out.
using Launch = void (*)(const float* in, int n, float* out, Scratch& s);

// CUB picks its own algorithm. The first call asks how much temporary storage it needs; that is
// allocated once and kept, outside the timed region (CUB's own benchmarks do the same).
void cub_sum(const float* in, int n, float* out, Scratch& s) {
  size_t bytes = 0;
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, in, out, n));
  if (bytes > s.cub_temp.size()) s.cub_temp = tutorial::DeviceBuffer<unsigned char>(bytes);
  CUDA_CHECK(cub::DeviceReduce::Sum(s.cub_temp.data(), bytes, in, out, n));
}

using Step = lab::Step<Launch>;
const Step kSteps[] = {
    {"1 interleaved, divergent", reduction::launch_interleaved_divergent},
    {"2 interleaved, bank conflicts", reduction::launch_interleaved_strided},
    {"3 sequential addressing", reduction::launch_sequential},
    {"4 first add during load", reduction::launch_first_add_during_load},
    {"5 warp shuffles", reduction::launch_warp_shuffle},
    {"6 grid-stride, float4, 2 launches", reduction::launch_grid_stride},
    {"7 single pass (last block sums)", reduction::launch_single_pass},
    {"CUB DeviceReduce::Sum", cub_sum},
};
constexpr int kStepCount = sizeof(kSteps) / sizeof(kSteps[0]);
const Step& kCub = kSteps[kStepCount - 1];

// Runs one step into a poisoned result (and poisoned scratch) and returns what it computed.
float run_once(const Step& step, const tutorial::DeviceBuffer<float>& in, int n,
               tutorial::DeviceBuffer<float>& out, Scratch& scratch) {
  out.poison();
  scratch.a.poison();
  scratch.b.poison();
  step.launch(in.data(), n, out.data(), scratch);
  CUDA_CHECK(cudaDeviceSynchronize());
  return out.download()[0];
}

// Inputs for the exact check: -1, 0 or +1, with every k-th element non-zero, k chosen so that at
// most 2^24 are. The sum of their absolute values bounds every partial sum: exact in float.
std::vector<float> exact_inputs(int n, double& expected) {
  const int k = static_cast<int>((n + (1 << 24) - 1) >> 24);  // ceil(n / 2^24)
  std::vector<float> v(n, 0.0f);
  expected = 0.0;
  for (int i = 0; i < n; i += k) {
    v[i] = (lab::mix(7, i) & 1) ? 1.0f : -1.0f;
    expected += v[i];
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const lab::ArrayLab lab{"07_reduction",
                          "Sums an array of floats seven ways (Harris's progression), each verified and "
                          "timed against CUB's DeviceReduce::Sum.",
                          1 << 28, 1 + 1.0 / 64, "the input, its scratch",  // partials: n / 128
                          kStepCount - 1};  // CUB, the last entry of kSteps, always runs
  return lab::run_steps(argc, argv, lab, [](lab::ArrayRun& run) {
    const int n = run.options.n, only = run.options.step;
    const size_t bytes = size_t(n) * sizeof(float);
    std::printf("Sum of %d floats (%.2f GiB).\n\n", n, bytes / double(1ull << 30));
    tutorial::DeviceBuffer<float> in(n), out(1);
    Scratch scratch(n);
    auto selected = [&](int s) { return only == 0 || s + 1 == only || &kSteps[s] == &kCub; };

    double exact_sum = 0.0;
    in.upload(exact_inputs(n, exact_sum));
    tutorial::Verifier& verifier = run.verifier;
    for (int s = 0; s < kStepCount; ++s)
      if (selected(s))
        verifier.exact(
            tutorial::format("step %s, inputs in {-1, 0, 1}, exact sum %.0f", kSteps[s].name, exact_sum),
            std::fabs(double(run_once(kSteps[s], in, n, out, scratch)) - exact_sum));

    const std::vector<float> random = lab::uniform(n, 0.0f, 1.0f, 3);
    double reference = 0.0;
    for (float v : random) reference += v;
    in.upload(random);
    for (int s = 0; s < kStepCount; ++s)
      if (selected(s))
        verifier.within(
            tutorial::format("step %s, uniform [0, 1) inputs vs float64 sum", kSteps[s].name),
            std::fabs(double(run_once(kSteps[s], in, n, out, scratch)) - reference) / reference, 1e-5);
    if (!run.timed()) return;

    // Timing: the input is read once (4 bytes an element); the partial sums are a rounding error.
    const double copy_gbs = run.copy_gbs();
    std::vector<double> gbs(kStepCount, 0.0);
    std::vector<tutorial::Timing> timing(kStepCount);
    for (int s = 0; s < kStepCount; ++s) {
      if (!selected(s)) continue;
      timing[s] =
          lab::time_step([&] { kSteps[s].launch(in.data(), n, out.data(), scratch); }, run.options.runs);
      gbs[s] = tutorial::gigabytes_per_second(double(bytes), timing[s].median_ms);
    }
    const double cub_gbs = gbs[kStepCount - 1];
    std::printf("\n### Sum of %d floats: %.0f MB read per run; copy bandwidth %.0f GB/s\n\n", n,
                bytes / 1e6, copy_gbs);
    lab::Ladder table({"Step", "Time", "GB/s", "% of CUB", "% of copy"});
    double best = 0.0;
    for (int s = 0; s < kStepCount; ++s) {
      if (!selected(s)) continue;
      const std::vector<std::string> row = {kSteps[s].name, tutorial::format_time(timing[s].median_ms),
                                            tutorial::format("%.0f", gbs[s]), lab::percent(gbs[s], cub_gbs),
                                            lab::percent(gbs[s], copy_gbs)};
      if (&kSteps[s] == &kCub) {
        table.add_limit(row);
        continue;
      }
      best = std::max(best, gbs[s]);
      verifier.figure(tutorial::format("step%d_pct_of_cub", s + 1), std::round(1000 * gbs[s] / cub_gbs) / 10);
      table.add_step(timing[s].median_ms, row, verifier);
    }
    table.print();
    std::printf("\n");
    verifier.goal("best step's share of CUB's throughput", 100 * best / cub_gbs, 95, "%");
    verifier.figure("cub_gbs", std::round(cub_gbs));
    verifier.figure("best_pct_of_cub", std::round(1000 * best / cub_gbs) / 10);
  });
}
