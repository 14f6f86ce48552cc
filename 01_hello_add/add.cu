// add.cu: the first CUDA program of the course.
//
// Two arrays of floats in unified memory, x = 1 and y = 2, and a kernel that
// computes y = x + y on the GPU with a single thread. The point is the shape of
// every CUDA program (allocate, launch, wait, check, free), not speed: chapter 03
// puts the rest of the GPU to work.
//
// Builds on its own, with standard and CUDA headers only:
//   nvcc -std=c++17 -arch=native -o add add.cu && ./add
//
// Exit codes: 0 the result is right, 1 it is wrong (or a CUDA call failed),
// 2 bad command line, 77 no usable GPU (CTest reports "skipped").
#include <cuda_runtime.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

// Every CUDA runtime call returns an error code that is easy to ignore; ignored,
// a failure shows up much later as a wrong result. Check each one.
#define CHECK(call) check((call), #call, __LINE__)

void check(cudaError_t err, const char* call, int line) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "CUDA call failed: %s\n  at add.cu:%d\n  %s: %s\n", call, line,
               cudaGetErrorName(err), cudaGetErrorString(err));
  std::exit(1);
}

constexpr int kExitUsage = 2;
constexpr int kExitNoGpu = 77;
constexpr long long kDefaultN = 1 << 20;  // the notes' 1M elements
constexpr long long kMaxN = 1 << 28;      // one thread: about 25 s on a current GPU

// __global__ marks a kernel: it runs on the GPU and is launched from the CPU.
// A kernel returns void; its results go through memory.
__global__ void add(int n, const float* x, float* y) {
  for (int i = 0; i < n; ++i) y[i] = x[i] + y[i];
}

[[noreturn]] void usage(const char* program, const std::string& problem) {
  if (problem.empty()) {
    std::printf("Usage: %s [--n N]\n"
                "Adds two arrays of N floats (default %lld, 1 to %lld) on the GPU with one thread.\n",
                program, kDefaultN, kMaxN);
    std::exit(0);
  }
  std::fprintf(stderr, "%s: %s (see %s --help)\n", program, problem.c_str(), program);
  std::exit(kExitUsage);
}

// N from "--n N" or "--n=N", written as every chapter's programs take a number:
// decimal digits ("1048576") or a power of two ("2^20"). Anything else is refused.
int parse_n(int argc, char** argv) {
  long long n = kDefaultN;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string value;
    if (arg == "--help" || arg == "-h") usage(argv[0], "");
    if (arg == "--n" && i + 1 < argc) {
      value = argv[++i];
    } else if (arg.rfind("--n=", 0) == 0) {
      value = arg.substr(4);
    } else if (arg == "--n") {
      usage(argv[0], "--n needs a value");
    } else {
      usage(argv[0], (arg[0] == '-' ? "unknown option '" : "unexpected argument '") + arg + "'");
    }
    const size_t caret = value.find('^');
    const std::string digits = caret == std::string::npos ? value : value.substr(caret + 1);
    const size_t sign = caret == std::string::npos && (value[0] == '-' || value[0] == '+');
    if (digits.size() <= sign || digits.find_first_not_of("0123456789", sign) != std::string::npos ||
        (caret != std::string::npos && value.substr(0, caret) != "2"))
      usage(argv[0], "--n: '" + value + "' is not a whole number (from 1 to " +
                         std::to_string(kMaxN) + ", e.g. 1048576 or 2^20)");
    errno = 0;
    const long long number = std::strtoll(digits.c_str(), nullptr, 10);
    if (errno == ERANGE || (caret != std::string::npos && number > 62))
      usage(argv[0], "--n: '" + value + (value[0] == '-' ? "' is too small (at least 1)"
                                                          : "' is too large (at most " +
                                                                std::to_string(kMaxN) + ")"));
    n = caret == std::string::npos ? number : 1LL << number;
    if (n < 1) usage(argv[0], "--n must be at least 1 (got " + value + ")");
    if (n > kMaxN) usage(argv[0], "--n must be at most " + std::to_string(kMaxN) + " (got " + value + ")");
  }
  return static_cast<int>(n);
}

// Exits 77 with the reason unless there is a GPU and this binary has code for it.
[[noreturn]] void skip(const std::string& reason) {
  std::fprintf(stderr, "No usable CUDA GPU: %s\nSkipping (exit code %d).\n", reason.c_str(), kExitNoGpu);
  std::exit(kExitNoGpu);
}

void require_gpu() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaErrorInsufficientDriver)
    skip(std::string("no NVIDIA driver found, or it is older than this CUDA runtime (") +
         cudaGetErrorName(err) + ").");
  if (err != cudaSuccess || count == 0)
    skip(std::string("the driver reports no CUDA device (") +
         (err == cudaSuccess ? "0 devices" : cudaGetErrorName(err)) +
         "); check nvidia-smi and CUDA_VISIBLE_DEVICES.");
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("Device 0: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);

  // Asking for the kernel's attributes makes the runtime look for machine code or
  // PTX that this GPU can run: a binary built for another GPU is caught here.
  cudaFuncAttributes attributes{};
  const cudaError_t image = cudaFuncGetAttributes(&attributes, add);
  if (image == cudaErrorNoKernelImageForDevice || image == cudaErrorInvalidDeviceFunction) {
    const std::string cc = std::to_string(prop.major * 10 + prop.minor);
    skip(std::string(prop.name) + " is compute capability " + std::to_string(prop.major) + "." +
         std::to_string(prop.minor) + ", but this binary holds no code for it. Rebuild with " +
         "nvcc -arch=sm_" + cc + " (or -arch=native), or -DCMAKE_CUDA_ARCHITECTURES=" + cc + ".");
  }
  CHECK(image);
}

int main(int argc, char** argv) {
  const int n = parse_n(argc, argv);
  require_gpu();

  // Unified (managed) memory: one pointer that both the CPU and the GPU can use.
  // The driver moves its pages to whichever processor touches them.
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  float* x = nullptr;
  float* y = nullptr;
  CHECK(cudaMallocManaged(&x, bytes));
  CHECK(cudaMallocManaged(&y, bytes));
  for (int i = 0; i < n; ++i) {
    x[i] = 1.0f;
    y[i] = 2.0f;
  }

  // <<<1, 1>>>: a grid of one block of one thread. The launch only queues the
  // kernel and returns; a bad launch is reported by cudaGetLastError(), and an
  // error inside the kernel by the next call that waits for the GPU.
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  add<<<1, 1>>>(n, x, y);
  CHECK(cudaGetLastError());
  const auto launched = Clock::now();
  // The CPU must wait for the GPU before it reads y.
  CHECK(cudaDeviceSynchronize());
  const auto finished = Clock::now();

  const double launch_us = std::chrono::duration<double, std::micro>(launched - start).count();
  const double kernel_ms = std::chrono::duration<double, std::milli>(finished - start).count();
  std::printf("add<<<1, 1>>> on %d elements:\n", n);
  std::printf("  the launch call returned after %.3g us: the CPU does not wait for the kernel\n",
              launch_us);
  std::printf("  cudaDeviceSynchronize returned after %.3g ms: the kernel, moving the pages to "
              "the GPU included\n", kernel_ms);

  // 1 + 2 = 3 exactly in float, so any difference at all is a bug. Unlike fmax,
  // this keeps a NaN: a kernel that wrote NaN must not read "Max error: 0".
  float max_error = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float error = std::fabs(y[i] - 3.0f);
    if (std::isnan(error) || error > max_error) max_error = error;
  }
  std::printf("Max error: %g  (y = x + y, every element 3)\n", max_error);

  CHECK(cudaFree(x));
  CHECK(cudaFree(y));

  // The last line, for scripts and tests: one check, exact, and the headline figures.
  const bool passed = max_error == 0.0f;
  std::printf("\nSUMMARY {\"program\":\"01_hello_add\",\"checks\":1,\"failed\":%d,\"exact\":1,"
              "\"goals\":[],\"figures\":{\"kernel_ms\":%.3g,\"launch_us\":%.3g}}\n",
              passed ? 0 : 1, kernel_ms, launch_us);
  return passed ? 0 : 1;
}
