// add.cu: the course's first CUDA program. y = x + y on 2^20 floats (x = 1, y = 2), by a
// kernel that runs on the GPU with a single thread; chapter 03 puts the rest of the GPU to work.
//   nvcc -std=c++17 -arch=native -o add add.cu && ./add
// Exit code: 0 every element is exactly 3; 1 one is not, or a CUDA call failed;
// 2 it was given arguments (it takes none); 77 no usable GPU (tests count that as skipped).
#include <cmath>
#include <cstdio>
#include <cstdlib>

// Every CUDA call returns an error code; ignored, a failure shows up later as a wrong answer.
#define CHECK(call) check((call), #call, __LINE__)
void check(cudaError_t err, const char* call, int line) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "CUDA call failed: %s\n  at add.cu:%d\n  %s: %s\n", call, line,
               cudaGetErrorName(err), cudaGetErrorString(err));
  if (err == cudaErrorNoKernelImageForDevice)
    std::fprintf(stderr, "  hint: this binary has no code for this GPU: rebuild with -arch=native\n");
  std::exit(1);
}

// [excerpt:kernel]
// __global__: a kernel, run on the GPU and launched from the CPU. It returns nothing (void);
// its results go through memory.
__global__ void add(int n, const float* x, float* y) {
  for (int i = 0; i < n; ++i) y[i] = x[i] + y[i];
}
// [/excerpt:kernel]

int main(int argc, char** argv) {
  if (argc > 1) {
    std::fprintf(stderr, "%s takes no arguments (to change the size, edit n in add.cu)\n", argv[0]);
    return 2;
  }
  int devices = 0;  // no driver or no GPU: say why, and exit 77
  const cudaError_t found = cudaGetDeviceCount(&devices);
  if (found != cudaSuccess || devices == 0) {
    std::fprintf(stderr, found == cudaErrorInsufficientDriver
        ? "No usable CUDA GPU: no NVIDIA driver found, or it is older than this CUDA runtime (%s).\n"
        : "No usable CUDA GPU: the driver reports no CUDA device (%s); check nvidia-smi and "
          "CUDA_VISIBLE_DEVICES.\n", found == cudaSuccess ? "0 devices" : cudaGetErrorName(found));
    std::fprintf(stderr, "Skipping (exit code 77).\n");
    return 77;
  }

  // [excerpt:launch]
  const int n = 1 << 20;
  float *x = nullptr, *y = nullptr;
  CHECK(cudaMallocManaged(&x, n * sizeof(float)));  // one pointer for the CPU and the GPU
  CHECK(cudaMallocManaged(&y, n * sizeof(float)));
  for (int i = 0; i < n; ++i) {  // the CPU writes them: their pages start in host memory
    x[i] = 1.0f;
    y[i] = 2.0f;
  }

  add<<<1, 1>>>(n, x, y);          // one block of one thread; returns before the GPU is done
  CHECK(cudaGetLastError());       // was the launch accepted? (a launch returns no status)
  CHECK(cudaDeviceSynchronize());  // wait for the GPU; errors inside the kernel show here
  // [/excerpt:launch]

  // 1 + 2 = 3 exactly, so any difference is a bug. Unlike fmax, this keeps a NaN.
  float max_error = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float error = std::fabs(y[i] - 3.0f);
    if (std::isnan(error) || error > max_error) max_error = error;
  }
  std::printf("Max error: %g\n", max_error);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  return max_error == 0.0f ? 0 : 1;
}
