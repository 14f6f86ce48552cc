// Chapter 03, part 2: all four launch parameters, kernel<<<Dg, Db, Ns, S>>>.
//
//   Dg, Db  dim3 grid and block in two dimensions: a matrix transpose with
//           16 x 16 blocks on a matrix whose sides are not multiples of 16;
//   Ns      bytes of dynamic shared memory (extern __shared__): a tiled transpose
//           whose tile size is chosen at run time;
//   S       a stream: two independent jobs in two streams run at the same time.
// Every result is checked exactly; the transposes and the streams are timed.
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

// ---- Dg and Db: a 2-D grid of 2-D blocks --------------------------------------
// out (cols x rows) = transpose of in (rows x cols), both row-major.
// x runs along a row (columns), y down the columns (rows): threads with
// neighbouring threadIdx.x read neighbouring elements of `in`. Both sides are
// rounded up to whole blocks, so both coordinates need a bounds check.
__global__ void transpose_naive(int rows, int cols, const unsigned* in, unsigned* out) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols)
    out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
}
// The reads above are coalesced, the writes are not: neighbouring threads write
// `rows` elements apart, so every 4-byte store touches its own 32-byte sector.

// ---- Ns: dynamic shared memory ------------------------------------------------
// A block (tile x tile threads) stages a tile of `in` in shared memory, then
// writes it out transposed, so that both the global reads and the global writes
// go along rows. The tile size is a run-time value, so the array cannot be
// declared with a size: `extern __shared__` gets the Ns bytes of the launch.
// Each row of the tile is padded by one element: without it, the elements of a
// column of a 32 x 32 tile all sit in the same one of the 32 shared-memory banks,
// and a warp reading that column is served one element at a time.
__global__ void transpose_tiled(int rows, int cols, const unsigned* in, unsigned* out) {
  extern __shared__ unsigned tile[];  // blockDim.y rows of (blockDim.x + 1)
  const int t = blockDim.x;           // square tiles: blockDim.x == blockDim.y
  const int pitch = t + 1;
  int c = blockIdx.x * t + threadIdx.x;
  int r = blockIdx.y * t + threadIdx.y;
  if (r < rows && c < cols)
    tile[threadIdx.y * pitch + threadIdx.x] = in[static_cast<size_t>(r) * cols + c];
  __syncthreads();  // the whole tile is loaded before anyone reads another thread's element
  c = blockIdx.y * t + threadIdx.x;  // column of `out` = row of `in`
  r = blockIdx.x * t + threadIdx.y;  // row of `out` = column of `in`
  if (r < cols && c < rows)
    out[static_cast<size_t>(r) * rows + c] = tile[threadIdx.x * pitch + threadIdx.y];
}

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

/// Dg, Db and Ns: both transposes on a rows x cols matrix, checked exactly and timed.
void transpose_demo(int rows, int cols, int tile, tutorial::TimingPlan plan,
                    tutorial::Verifier& verifier) {
  const size_t elements = static_cast<size_t>(rows) * cols;
  std::printf("\nTranspose of a %d x %d matrix of 32-bit integers\n", rows, cols);
  std::vector<unsigned> host(elements), want(elements);
  for (size_t i = 0; i < elements; ++i) host[i] = static_cast<unsigned>(i);  // all different, exact
  for (int r = 0; r < rows; ++r)                                             // the CPU reference
    for (int c = 0; c < cols; ++c)
      want[static_cast<size_t>(c) * rows + r] = host[static_cast<size_t>(r) * cols + c];
  tutorial::DeviceBuffer<unsigned> in(elements), out(elements);
  in.upload(host);

  const dim3 block(tile, tile);                                         // Db: tile x tile threads
  const dim3 grid((cols + tile - 1) / tile, (rows + tile - 1) / tile);  // Dg: rounded up to whole blocks
  const size_t shared_bytes = static_cast<size_t>(tile) * (tile + 1) * sizeof(unsigned);  // Ns
  std::printf("Dg = (%u, %u) blocks, Db = (%u, %u) threads, Ns = %zu bytes for the tiled kernel\n",
              grid.x, grid.y, block.x, block.y, shared_bytes);

  auto naive = [&] {
    transpose_naive<<<grid, block>>>(rows, cols, in.data(), out.data());
    CUDA_CHECK_LAUNCH();
  };
  auto tiled = [&] {
    transpose_tiled<<<grid, block, shared_bytes>>>(rows, cols, in.data(), out.data());
    CUDA_CHECK_LAUNCH();
  };
  const double bytes = 2.0 * elements * sizeof(unsigned);  // each element read once, written once
  const double copy_gbs = tutorial::copy_bandwidth_gbs(elements * sizeof(unsigned), plan);
  tutorial::Table table({"kernel", "launch <<<Dg, Db, Ns>>>", "time (median)", "GB/s", "% of copy"});
  auto verify_and_time = [&](auto& launch, const char* name, size_t ns) {
    out.poison();
    launch();
    verifier.exact(tutorial::format("%s, every element", name),
                   tutorial::max_abs_error(out.download().data(), want.data(), elements));
    const double ms = tutorial::time_gpu(launch, plan).median_ms;
    const double gbs = tutorial::gigabytes_per_second(bytes, ms);
    table.add_row(
        {name, tutorial::format("<<<(%u, %u), (%u, %u), %zu>>>", grid.x, grid.y, block.x, block.y, ns),
         tutorial::format_time(ms), tutorial::format("%.0f", gbs),
         tutorial::format("%.1f%%", 100 * gbs / copy_gbs)});
    verifier.figure(std::string(name) + "_pct_of_copy", std::round(1000 * gbs / copy_gbs) / 10);
  };
  verify_and_time(naive, "transpose_naive", 0);
  verify_and_time(tiled, "transpose_tiled", shared_bytes);
  std::printf("Device-to-device cudaMemcpy of the same bytes: %.0f GB/s (read + write)\n\n", copy_gbs);
  table.print();
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
      CUDA_CHECK(cudaEventRecord(fork, s1));
      CUDA_CHECK(cudaStreamWaitEvent(s2, fork, 0));
      a.launch(size.grid, s1);
      b.launch(size.grid, s2);
      CUDA_CHECK(cudaEventRecord(join, s2));
      CUDA_CHECK(cudaStreamWaitEvent(s1, join, 0));
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
  cli.add_int("tile", "block side for the transposes (tile x tile threads)", 16, 1, 32);
  cli.add_int("stream-n", "elements of each of the two stream jobs", 1 << 24, 1, 1 << 28);
  cli.add_int("runs", "timed runs per measurement; the median is reported", 20, 1, 1000);
  cli.parse_or_exit(argc, argv);
  const int rows = static_cast<int>(cli.get_int("rows"));
  const int cols = static_cast<int>(cli.get_int("cols"));
  const int tile = static_cast<int>(cli.get_int("tile"));
  const size_t stream_n = cli.get_int("stream-n");
  const tutorial::TimingPlan plan{3, static_cast<int>(cli.get_int("runs"))};
  auto usage_error = [&](const std::string& message) {
    std::fputs(cli.error_line(message).c_str(), stderr);
    return tutorial::kExitUsage;
  };
  const size_t elements = static_cast<size_t>(rows) * cols;
  if (elements > (1u << 28))
    return usage_error(
        tutorial::format("--rows x --cols must be at most 2^28 elements (got %zu)", elements));

  const tutorial::DeviceInfo gpu = tutorial::require_gpu();
  // The grid's y dimension is limited to 65535 blocks (read from the device):
  // a request past it is refused here, not left to fail at launch.
  int max_grid_y = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&max_grid_y, cudaDevAttrMaxGridDimY, gpu.id));
  const int blocks_y = (rows + tile - 1) / tile;
  if (blocks_y > max_grid_y)
    return usage_error(
        tutorial::format("--rows %d / --tile %d needs %d blocks in y, more than this GPU's %d: "
                         "use a larger --tile",
                         rows, tile, blocks_y, max_grid_y));
  // Largest moment: the two matrices plus the copy benchmark's two buffers.
  tutorial::require_device_memory(
      std::max(4 * elements * sizeof(unsigned), 6 * stream_n * sizeof(float)),
      "the matrices or the stream jobs' arrays");

  tutorial::Verifier verifier;
  transpose_demo(rows, cols, tile, plan, verifier);
  streams_demo(stream_n, gpu.sm_count, plan, verifier);
  return verifier.finish("03_launch_params");
}
