// Chapter 01: the first CUDA program.
//
// Two arrays of floats in unified memory, x = 1 and y = 2, and a kernel that
// computes y = x + y on the GPU. One GPU thread does all the work here: the
// point is the shape of every CUDA program (allocate, launch, wait, check,
// free), not speed. Chapter 03 puts the rest of the GPU to work.
#include <cstdio>

#include <tutorial/check.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/timer.cuh>
#include <tutorial/table.hpp>
#include <tutorial/verify.hpp>

// __global__ marks a kernel: a function that runs on the GPU and is launched
// from the CPU. A kernel must return void; results go through memory.
__global__ void add(int n, const float* x, float* y) {
  for (int i = 0; i < n; ++i) y[i] = x[i] + y[i];
}

int main(int argc, char** argv) {
  tutorial::Cli cli("01_hello_add", "Adds two arrays of floats on the GPU with a single thread.");
  cli.add_int("n", "number of elements", 1 << 20, 1, 1 << 28);
  cli.parse_or_exit(argc, argv);
  const int n = static_cast<int>(cli.get_int("n"));

  tutorial::require_gpu();
  const size_t bytes = n * sizeof(float);
  tutorial::require_device_memory(2 * bytes, "two arrays of --n floats");

  // Unified (managed) memory: one pointer that both the CPU and the GPU can use.
  // The driver moves the pages to whichever processor touches them.
  float* x = nullptr;
  float* y = nullptr;
  CUDA_CHECK(cudaMallocManaged(&x, bytes));
  CUDA_CHECK(cudaMallocManaged(&y, bytes));
  for (int i = 0; i < n; ++i) {
    x[i] = 1.0f;
    y[i] = 2.0f;
  }

  // <<<1, 1>>>: a grid of one block of one thread. The launch only queues the
  // kernel and returns at once; the CPU goes on while the GPU works.
  tutorial::EventTimer timer;
  timer.start();
  add<<<1, 1>>>(n, x, y);
  CUDA_CHECK_LAUNCH();
  timer.stop();

  // Wait for the GPU before the CPU reads y: without this the CPU would read
  // memory the kernel has not written yet. Errors raised inside the kernel
  // (a bad address, say) are reported here too.
  CUDA_CHECK(cudaDeviceSynchronize());

  std::printf("add<<<1, 1>>> on %d elements: %s (one launch, first touch of managed memory)\n", n,
              tutorial::format_time(timer.elapsed_ms()).c_str());

  // 1 + 2 = 3 exactly in float, so any difference at all is a bug.
  tutorial::Verifier verifier;
  verifier.exact("y = x + y, every element 3", tutorial::max_abs_error_from(y, 3.0, n));

  CUDA_CHECK(cudaFree(x));
  CUDA_CHECK(cudaFree(y));
  return verifier.exit_code();
}
