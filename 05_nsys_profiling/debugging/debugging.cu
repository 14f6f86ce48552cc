// Chapter 05, lesson "debugging": device printf, and a planted bug for cuda-gdb.
//
// Row sums of a small matrix whose answer is known (row r holds r in every column: its sum is
// r * cols). The correct kernel passes; --planted-bug runs a kernel that skips the last column,
// as an off-by-one loop bound does, and the check says by how much. cuda_gdb_session.sh runs the
// buggy kernel under cuda-gdb (built with -G as 05_debugging_g) and prints what a student types.
#include <cstdio>
#include <tutorial/buffer.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/verify.hpp>
#include <vector>

namespace {

// [excerpt:printf]
__global__ void row_sums(const int* matrix, int rows, int cols, int* sums, bool trace) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  int sum = 0;
  for (int c = 0; c < cols; ++c) sum += matrix[row * cols + c];
  sums[row] = sum;
  if (trace && row % 32 == 0)  // a few threads only: every line costs, and the buffer is finite
    printf("block %d thread %d: row %d sums to %d\n", blockIdx.x, threadIdx.x, row, sum);
}
// [/excerpt:printf]

// [excerpt:planted-bug]
__global__ void row_sums_planted(const int* matrix, int rows, int cols, int* sums) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  int sum = 0;
  for (int c = 0; c < cols - 1; ++c) sum += matrix[row * cols + c];  // the bug: cols - 1
  sums[row] = sum;  // cuda-gdb stops here
}
// [/excerpt:planted-bug]

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("05_debugging", "Row sums, with device printf; --planted-bug runs a kernel with a bug.");
  cli.add_int("rows", "rows of the matrix", 128, 1, 1 << 20);
  cli.add_int("cols", "columns of the matrix", 16, 1, 4096);
  cli.add_flag("planted-bug", "run the kernel with the planted bug (its check fails)");
  cli.add_flag("trace", "print from a few threads with device printf");
  cli.parse_or_exit(argc, argv);
  const int rows = int(cli.get_int("rows")), cols = int(cli.get_int("cols"));
  if (size_t(rows) * cols > (1u << 28)) {
    std::fprintf(stderr, "05_debugging: --rows x --cols must be at most 2^28\n");
    return tutorial::kExitUsage;
  }
  tutorial::require_gpu();
  tutorial::Verifier verifier;

  size_t fifo = 0;
  CUDA_CHECK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
  std::printf("Device printf buffer: %zu KiB (cudaLimitPrintfFifoSize); lines beyond it are lost.\n",
              fifo / 1024);

  std::vector<int> host(size_t(rows) * cols), want(rows);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) host[size_t(r) * cols + c] = r;
    want[r] = r * cols;
  }
  tutorial::DeviceBuffer<int> matrix(host.size()), sums(rows);
  matrix.upload(host);
  sums.poison();
  const int threads = 64, blocks = (rows + threads - 1) / threads;
  if (cli.get_flag("planted-bug"))
    row_sums_planted<<<blocks, threads>>>(matrix.data(), rows, cols, sums.data());
  else
    row_sums<<<blocks, threads>>>(matrix.data(), rows, cols, sums.data(), cli.get_flag("trace"));
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());  // device printf's lines appear here, at a synchronization
  const std::vector<int> got = sums.download();
  verifier.exact(cli.get_flag("planted-bug") ? "row sums, planted bug" : "row sums",
                 tutorial::max_abs_error(got.data(), want.data(), size_t(rows)));
  return verifier.finish("05_debugging");
}
