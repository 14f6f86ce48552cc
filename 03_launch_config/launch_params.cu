// Chapter 03, part 2: all four launch parameters, kernel<<<Dg, Db, Ns, S>>>.
//
//   Dg, Db  dim3 grid and block in two dimensions: a matrix transpose with 32 x 32 tiles on
//           a matrix whose sides are not multiples of 32;
//   Ns      bytes of dynamic shared memory (extern __shared__): a tiled transpose whose
//           tile layout (padded or not) is chosen at launch, then one whose threads move
//           several rows each (4, after Mark Harris's "An Efficient Matrix Transpose in CUDA C/C++",
//           then 8);
//   S       a stream: two independent jobs in two streams run at the same time.
// Every result is checked exactly, on the GPU; the transposes are raced against a copy of the
// same bytes (interleaved, in rounds) and the streams are timed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <tutorial/buffer.cuh>
#include <tutorial/check.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>

#include "add_kernels.cuh"
#include "gpu_fill_check.cuh"
#include "share_of_copy.hpp"

// ---- Dg and Db: a 2-D grid of 2-D blocks --------------------------------------
// out (cols x rows) = transpose of in (rows x cols), both row-major, in tiles of
// kTile x kTile elements: a warp (32 threads) reads or writes one tile row, 128 bytes.
constexpr int kTile = 32;
// Rounds of the race between the transposes and the copy (odd: one median round).
constexpr int kRounds = 7;

// [excerpt:transpose-naive]
// One thread per element, kTile x kTile threads per block. x runs along a row (columns),
// y down the columns (rows): threads with neighbouring threadIdx.x read neighbouring
// elements of `in`. Both sides are rounded up to whole blocks, so both coordinates need a
// bounds check.
__global__ void transpose_naive(int rows, int cols, const unsigned* in, unsigned* out) {
  const int c = blockIdx.x * kTile + threadIdx.x;
  const int r = blockIdx.y * kTile + threadIdx.y;
  if (r < rows && c < cols)
    out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
}
// [/excerpt:transpose-naive]
// The reads above are coalesced, the writes are not: neighbouring threads write
// `rows` elements apart, so every 4-byte store touches its own 32-byte sector.

// ---- Ns: dynamic shared memory ------------------------------------------------
// [excerpt:transpose-tiled]
// A block stages one tile of `in` in shared memory, then writes it out transposed, so both
// the global reads and the global writes go along rows. Its kTile x (kTile / kRowsPerThread)
// threads move kRowsPerThread rows each. `pitch`, the elements per tile row in shared
// memory, is chosen at launch (kTile, or kTile + 1 to pad), so the array has no size here:
// `extern __shared__` gets the Ns bytes of the launch, kTile * pitch elements.
template <int kRowsPerThread>
__global__ void transpose_tiled(int rows, int cols, int pitch, const unsigned* __restrict__ in,
                                unsigned* __restrict__ out) {
  extern __shared__ unsigned tile[];
  constexpr int kStep = kTile / kRowsPerThread;  // blockDim.y
  int c = blockIdx.x * kTile + threadIdx.x;
  // Every row into registers first, then into the tile: in one loop, nvcc (13.0, sm_90) let
  // the first row's store to shared memory wait for its load before the other rows' loads
  // were issued; apart, all kRowsPerThread loads are in flight at once (nvcc 11.8 and 13.0;
  // ctest 03_launch_config.transpose_loads_first reads it from each build's sm_90 code).
  unsigned row[kRowsPerThread];
#pragma unroll
  for (int k = 0; k < kRowsPerThread; ++k) {
    const int y = threadIdx.y + k * kStep, r = blockIdx.y * kTile + y;
    if (r < rows && c < cols) row[k] = in[static_cast<size_t>(r) * cols + c];
  }
#pragma unroll
  for (int k = 0; k < kRowsPerThread; ++k) {
    const int y = threadIdx.y + k * kStep, r = blockIdx.y * kTile + y;
    if (r < rows && c < cols) tile[y * pitch + threadIdx.x] = row[k];
  }
  __syncthreads();  // the whole tile is loaded before any thread reads another thread's element
  c = blockIdx.y * kTile + threadIdx.x;  // column of `out` = row of `in`
#pragma unroll
  for (int k = 0; k < kRowsPerThread; ++k) {
    const int y = threadIdx.y + k * kStep, r = blockIdx.x * kTile + y;  // row of `out` = column of `in`
    if (r < cols && c < rows) out[static_cast<size_t>(r) * rows + c] = tile[threadIdx.x * pitch + y];
  }
}
// [/excerpt:transpose-tiled]
// The write phase reads a column of the tile: a warp's 32 threads read tile[tx * pitch + y]
// for tx = 0..31. Shared memory has 32 banks of 4 bytes; with pitch 32 all 32 addresses fall
// in one bank and the warp is served one element at a time (a 32-way bank conflict). With
// pitch 33 they fall in 32 different banks: one access.

// ---- S: streams ---------------------------------------------------------------
// A stream that is destroyed with its scope. Created with cudaStreamCreate, it
// is a "blocking" stream: it waits for work in the legacy default stream (stream
// 0) and stream 0 waits for it. So the fills, poisons and checks below, which
// run in stream 0, are ordered with the jobs without any extra synchronisation;
// inside the timed region nothing goes to stream 0, so the streams may overlap.
class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreate(&stream_)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// An event used only for ordering between streams, not for timing (cheaper).
class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  operator cudaEvent_t() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

namespace {

/// One independent job for the stream demo: z = x + y on its own arrays.
struct Job {
  Job(size_t n, float x_value, float y_value) : n(n), x(n), y(n), z(n), want(x_value + y_value) {
    chapter03::fill_on_gpu(x.data(), n, x_value);
    chapter03::fill_on_gpu(y.data(), n, y_value);
  }
  void launch(unsigned grid, cudaStream_t stream) {
    add_grid_stride<<<grid, 256, 0, stream>>>(n, x.data(), y.data(), z.data());
    CUDA_CHECK_LAUNCH();
  }
  size_t n;
  tutorial::DeviceBuffer<float> x, y, z;
  float want;
};

/// Dg, Db and Ns: five transposes of a rows x cols matrix, each change to the kernel or its
/// launch a row of its own, checked exactly and timed against a copy of the same bytes.
void transpose_demo(int rows, int cols, tutorial::TimingPlan plan, size_t l2_bytes,
                    tutorial::Verifier& verifier) {
  const size_t elements = static_cast<size_t>(rows) * cols;
  std::printf("\nTranspose of a %d x %d matrix of 32-bit integers, in %d x %d tiles\n", rows, cols,
              kTile, kTile);
  tutorial::DeviceBuffer<unsigned> in(elements), out(elements), copy(elements);
  chapter03::iota_on_gpu(in.data(), elements);  // in[i] = i: all different (up to 2^32), exact

  // [excerpt:transpose-launches]
  const dim3 grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);  // Dg: rounded up
  struct Transpose {
    const char* name;
    const char* change;
    void (*kernel)(int, int, int, const unsigned*, unsigned*);  // nullptr: transpose_naive
    dim3 block;                                                  // Db
    int pitch;                                                   // elements per tile row
  };
  const Transpose transposes[] = {
      {"transpose_naive", "one thread per element", nullptr, dim3(kTile, kTile), 0},
      {"transpose_tiled", "+ a tile in shared memory", transpose_tiled<1>, dim3(kTile, kTile), kTile},
      {"transpose_tiled", "+ one element of padding per tile row", transpose_tiled<1>,
       dim3(kTile, kTile), kTile + 1},
      {"transpose_tiled<4>", "+ 4 rows per thread", transpose_tiled<4>, dim3(kTile, kTile / 4),
       kTile + 1},
      {"transpose_tiled<8>", "+ 8 rows per thread", transpose_tiled<8>, dim3(kTile, kTile / 8),
       kTile + 1},
  };
  // [/excerpt:transpose-launches]

  auto shared_bytes = [](const Transpose& t) {  // Ns: one tile of kTile rows of `pitch` elements
    return t.kernel ? static_cast<size_t>(kTile) * t.pitch * sizeof(unsigned) : 0;
  };
  auto launch = [&](const Transpose& t) {
    const size_t ns = shared_bytes(t);
    if (t.kernel)
      t.kernel<<<grid, t.block, ns>>>(rows, cols, t.pitch, in.data(), out.data());
    else
      transpose_naive<<<grid, t.block>>>(rows, cols, in.data(), out.data());
    CUDA_CHECK_LAUNCH();
  };
  // Each checked once, exactly, on the GPU: out[c * rows + r] must hold r * cols + c.
  for (const Transpose& t : transposes) {
    out.poison();
    launch(t);
    verifier.exact(tutorial::format("%s, %s, every element", t.name, t.change),
                   chapter03::transpose_max_error_on_gpu(out.data(), rows, cols));
  }
  // Then raced against the copy in rounds: each round times the copy and every kernel back to
  // back (clocks and the card as alike as they get), and a kernel's share of the copy is taken
  // within its round. The median round is reported, with the range over rounds.
  std::vector<double> copy_ms;
  std::vector<std::vector<double>> ms(std::size(transposes)), share(std::size(transposes));
  for (int round = 0; round < kRounds; ++round) {
    copy_ms.push_back(tutorial::time_gpu([&] {
      CUDA_CHECK(cudaMemcpyAsync(copy.data(), in.data(), in.bytes(), cudaMemcpyDeviceToDevice));
    }, plan).median_ms);
    for (size_t i = 0; i < std::size(transposes); ++i) {
      ms[i].push_back(tutorial::time_gpu([&] { launch(transposes[i]); }, plan).median_ms);
      share[i].push_back(100 * copy_ms.back() / ms[i].back());  // same bytes on both sides
    }
  }
  const double bytes = 2.0 * elements * sizeof(unsigned);  // each element read once, written once
  const double copy_gbs = tutorial::gigabytes_per_second(bytes, tutorial::summarize(copy_ms).median_ms);
  const bool measurable = chapter03::share_is_measurable(bytes, l2_bytes);
  tutorial::Table table({"kernel", "change", "launch <<<Dg, Db, Ns>>>", "time (median)", "GB/s",
                         "% of copy", "rounds' range"});
  double best_percent = 0;
  for (size_t i = 0; i < std::size(transposes); ++i) {
    const Transpose& t = transposes[i];
    std::sort(share[i].begin(), share[i].end());
    const double percent = share[i][kRounds / 2], median_ms = tutorial::summarize(ms[i]).median_ms;
    best_percent = std::max(best_percent, percent);
    table.add_row({t.name, t.change,
                   tutorial::format("<<<(%u, %u), (%u, %u), %zu>>>", grid.x, grid.y, t.block.x,
                                    t.block.y, shared_bytes(t)),
                   tutorial::format_time(median_ms),
                   tutorial::format("%.0f", tutorial::gigabytes_per_second(bytes, median_ms)),
                   chapter03::share_of_copy(percent, 100, bytes, l2_bytes),  // percent of 100
                   measurable ? tutorial::format("%.1f-%.1f%%", share[i].front(), share[i].back()) : "n/a"});
  }
  std::printf("Device-to-device cudaMemcpy of the same bytes: %.0f GB/s (read + write, median of %d "
              "rounds)\n\n", copy_gbs, kRounds);
  table.print();
  if (!measurable) {
    std::printf("(%% of copy: n/a, too small to measure: %s.)\n",
                chapter03::too_small_reason(bytes, l2_bytes).c_str());
    return;
  }
  verifier.goal("best transpose's share of the copy bandwidth", best_percent, 85, "%");
  verifier.figure("transpose_best_pct_of_copy", std::round(best_percent * 10) / 10);
}

/// S: two independent jobs, in one stream and in two, checked exactly and timed.
void streams_demo(size_t n, int sm_count, tutorial::TimingPlan plan, tutorial::Verifier& verifier) {
  std::printf("\nStreams: two independent jobs, each z = x + y on its own %zu floats\n", n);
  Job a(n, 1.0f, 2.0f), b(n, 3.0f, 4.0f);
  Stream s1, s2;
  Event fork, join;
  int resident = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, add_grid_stride, 256, 0));
  struct JobSize {
    const char* what;
    unsigned grid;
    const char* figure;  // the README's name for its speed-up
  };
  // A small job leaves most of the GPU idle (a job with little parallelism, or
  // one limited to part of the GPU); a full one has a whole wave of blocks.
  const JobSize sizes[] = {
      {"small: half as many blocks as SMs", static_cast<unsigned>(std::max(1, sm_count / 2)),
       "small_jobs_speedup"},
      {"full: one wave of blocks", static_cast<unsigned>(sm_count * resident), "full_jobs_speedup"},
  };
  tutorial::Table table({"jobs", "launch per job", "one stream", "two streams", "speedup"});
  for (const JobSize& size : sizes) {
    // In one stream, job b starts only when job a has finished.
    auto one_stream = [&] {
      a.launch(size.grid, s1);
      b.launch(size.grid, s1);
    };
    // In two streams they may run at the same time. Fork: s2 waits until s1
    // reaches this point (after the timer's start event); join: s1 waits for
    // s2's job, so the timer's stop event in s1 comes after both jobs.
    auto two_streams = [&] {
      // [excerpt:streams-fork-join]
      CUDA_CHECK(cudaEventRecord(fork, s1));
      CUDA_CHECK(cudaStreamWaitEvent(s2, fork, 0));
      a.launch(size.grid, s1);
      b.launch(size.grid, s2);
      CUDA_CHECK(cudaEventRecord(join, s2));
      CUDA_CHECK(cudaStreamWaitEvent(s1, join, 0));
      // [/excerpt:streams-fork-join]
    };
    // Each way is checked once (both jobs, exactly) and then timed.
    auto verify_and_time = [&](auto& run, const char* how) {
      a.z.poison();
      b.z.poison();
      run();
      for (Job* job : {&a, &b})
        verifier.exact(tutorial::format("%s, job %c, %s", size.what, job == &a ? 'a' : 'b', how),
                       chapter03::max_abs_error_on_gpu(job->z.data(), job->n, job->want));
      return tutorial::time_gpu(run, plan, s1).median_ms;
    };
    const double one_ms = verify_and_time(one_stream, "one stream");
    const double two_ms = verify_and_time(two_streams, "two streams");
    table.add_row({size.what, tutorial::format("<<<%u, 256, 0, s>>>", size.grid),
                   tutorial::format_time(one_ms), tutorial::format_time(two_ms),
                   tutorial::format("%.2fx", one_ms / two_ms)});
    verifier.figure(size.figure, std::round(100 * one_ms / two_ms) / 100);
  }
  std::printf("\n");
  table.print();
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("03_launch_params",
                    "The four launch parameters <<<Dg, Db, Ns, S>>>: 2-D grids, dynamic shared "
                    "memory, streams.");
  cli.add_int("rows", "rows of the matrix to transpose", 1000, 1, 1 << 16);
  cli.add_int("cols", "columns of the matrix to transpose", 777, 1, 1 << 16);
  cli.add_int("stream-n", "elements of each of the two stream jobs", 1 << 24, 1, 1 << 28);
  cli.add_int("runs", "timed runs per measurement; the median is reported", 20, 1, 1000);
  cli.parse_or_exit(argc, argv);
  const int rows = static_cast<int>(cli.get_int("rows"));
  const int cols = static_cast<int>(cli.get_int("cols"));
  const size_t stream_n = cli.get_int("stream-n");
  const tutorial::TimingPlan plan{3, static_cast<int>(cli.get_int("runs"))};
  const size_t elements = static_cast<size_t>(rows) * cols;  // up to 2^32: 16 GiB per matrix

  const tutorial::DeviceInfo gpu = tutorial::require_gpu();
  // (The grid's y dimension, at most 65535 blocks, holds any --rows: 2^16 / 32 = 2048.)
  int l2_bytes = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, gpu.id));
  // Largest moment: the two matrices plus the copy's destination.
  tutorial::require_device_memory(
      std::max(3 * elements * sizeof(unsigned), 6 * stream_n * sizeof(float)),
      "the matrices or the stream jobs' arrays");

  tutorial::Verifier verifier;
  transpose_demo(rows, cols, plan, l2_bytes, verifier);
  streams_demo(stream_n, gpu.sm_count, plan, verifier);
  return verifier.finish("03_launch_params");
}
