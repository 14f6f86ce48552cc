// Chapter 04: one program, built six ways.
//
// CMakeLists.txt compiles this file and kernels.cu into six programs that differ
// only in the GPU code nvcc embeds in them: machine code (a cubin) for one
// architecture, PTX only, a fatbinary with both, nvcc's default, and two
// hand-written -gencode lines. Each program
//   1. says what it embeds (CMake passes the list in; the chapter's cuobjdump
//      tests check that the binary holds exactly that),
//   2. times how long the driver takes to load its kernels: PTX must be
//      compiled for the GPU first (just-in-time, JIT),
//   3. asks the driver what it loaded (cudaFuncGetAttributes) and says in words
//      whether the GPU runs machine code or JIT-compiled PTX,
//   4. runs the kernels and checks the results exactly.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <tutorial/buffer.cuh>
#include <tutorial/check.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/verify.hpp>

#include "driver_choice.hpp"
#include "kernels.cuh"

namespace {

// What this build embeds, as CMakeLists.txt configured it (see ch04_add_build there).
const char* const kBuild = CH04_BUILD;    // e.g. "ptx_only"
const char* const kRecipe = CH04_RECIPE;  // e.g. "CUDA_ARCHITECTURES 90-virtual"
const ch04::Embedded kEmbedded = {ch04::parse_architectures(CH04_MACHINE_CODE),  // e.g. "80,90"
                                   ch04::parse_architectures(CH04_PTX)};
// False when CMAKE_CUDA_ARCHITECTURES is all, all-major or native: CMake lets
// nvcc pick the list, so only cuobjdump can tell what is in the binary.
constexpr bool kEmbeddedKnown = CH04_EMBEDDED_KNOWN;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// CUDA_MODULE_LOADING left unset. Lazy loading came with CUDA 11.7, off by default, and
// is a feature of the runtime linked into this program as much as of the driver.
#if CUDART_VERSION >= 12020
constexpr const char* kModuleLoadingDefault = "LAZY, the default since CUDA 12.2";
#else
constexpr const char* kModuleLoadingDefault = "EAGER, the default of CUDA runtimes before 12.2";
#endif

// Milliseconds of wall-clock time that \p work takes on the CPU. Loading a
// module is CPU work inside the driver, so CUDA events cannot time it.
template <typename Work>
double wall_ms(Work&& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::string describe(const ch04::Choice& choice, int cc, bool force_ptx_jit) {
  const std::string gpu = std::to_string(cc / 10) + "." + std::to_string(cc % 10);
  const std::string arch = std::to_string(choice.arch);
  switch (choice.kind) {
    case ch04::Choice::Kind::kMachineCode:
      if (choice.arch == cc)
        return "machine code sm_" + arch + " (built for this GPU: nothing to compile at load)";
      return "machine code sm_" + arch + " (sm_" + arch + " runs on " + gpu +
             ": same major version, same or newer minor)";
    case ch04::Choice::Kind::kJitFromPtx: {
      std::string why;
      if (force_ptx_jit)
        why = "CUDA_FORCE_PTX_JIT=1 made the driver ignore the machine code";
      else if (kEmbedded.machine_code.empty())
        why = "this build has no machine code";
      else
        why = "its machine code (" + ch04::list_architectures(kEmbedded.machine_code, "sm_") +
              ") does not run on a " + gpu + " GPU";
      return "PTX compute_" + arch + ", JIT-compiled by the driver for sm_" + std::to_string(cc) + " (" + why + ")";
    }
    default:
      return "nothing: this build has no code for a " + gpu + " GPU";
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string program = std::string("04_") + kBuild;
  tutorial::Cli cli(program, "Chapter 04: saxpy and 32 polynomial kernels; reports which GPU code the driver "
                             "runs (machine code or JIT-compiled PTX) and how long loading it took.");
  cli.add_int("n", "number of elements", 1 << 20, 1, 1 << 28);
  cli.parse_or_exit(argc, argv);
  const int n = static_cast<int>(cli.get_int("n"));

  std::printf("%s: one program, six builds (chapter 04). This one: %s\n", program.c_str(), kRecipe);
  if (kEmbeddedKnown) {
    std::printf("  embeds machine code: %s\n", ch04::list_architectures(kEmbedded.machine_code, "sm_").c_str());
    std::printf("  embeds PTX:          %s\n", ch04::list_architectures(kEmbedded.ptx, "compute_").c_str());
  } else {
    std::printf("  embeds: whatever nvcc chose for that list (ask cuobjdump --list-elf --list-ptx)\n");
  }
  const std::string loading = environment("CUDA_MODULE_LOADING");
  if (loading.empty())
    std::printf("  CUDA_MODULE_LOADING: not set (%s)\n", kModuleLoadingDefault);
  else
    std::printf("  CUDA_MODULE_LOADING: %s\n", loading.c_str());
  const bool force_ptx_jit = environment("CUDA_FORCE_PTX_JIT") == "1";
  if (force_ptx_jit) {
    std::printf("  CUDA_FORCE_PTX_JIT=1: the driver ignores all machine code and JIT-compiles PTX.\n");
    if (kEmbeddedKnown && kEmbedded.ptx.empty())
      std::printf("  This build embeds no PTX, so no kernel in it can load on any GPU: the GPU check\n"
                  "  below must report that the binary has no code for the GPU (exit code 77).\n");
  }

  // 1. Startup: the CUDA context, and the module of this file (it holds the
  //    small probe kernel require_gpu() asks for; in a PTX-only build the driver
  //    JIT-compiles that too, and loads its JIT compiler the first time).
  std::fflush(stdout);  // keeps these lines before require_gpu()'s messages in a log
  tutorial::DeviceInfo gpu;
  const double startup_ms = wall_ms([&] { gpu = tutorial::require_gpu(); });
  tutorial::require_device_memory(3 * size_t(n) * sizeof(float), "three arrays of --n floats");

  // 2. The kernels' module. Lazy loading: the driver loads a module when one of
  //    its kernels is first used, and asking for a kernel's attributes is a use.
  //    For PTX, this is when the JIT compilation happens.
  const std::vector<ch04::Kernel> kernels = ch04::all_kernels();
  std::vector<cudaFuncAttributes> attributes(kernels.size());
  const double load_ms = wall_ms([&] {
    for (size_t k = 0; k < kernels.size(); ++k)
      CUDA_CHECK(cudaFuncGetAttributes(&attributes[k], kernels[k].function));
  });
  std::printf("Startup (CUDA context and main module): %.2f ms\n", startup_ms);
  std::printf("Kernel module load (kernels.cu, %zu kernels): %.2f ms\n", kernels.size(), load_ms);

  // 3. What the driver loaded. binaryVersion: the machine code that runs;
  //    ptxVersion: the virtual architecture that code came from.
  const int cc = gpu.cc_major * 10 + gpu.cc_minor;
  const cudaFuncAttributes& saxpy = attributes[0];
  std::printf("cudaFuncGetAttributes(saxpy): binaryVersion %d, ptxVersion %d\n", saxpy.binaryVersion,
              saxpy.ptxVersion);
  tutorial::Verifier verifier;
  if (kEmbeddedKnown) {
    const ch04::Choice choice = ch04::choose(kEmbedded, cc, force_ptx_jit);
    std::printf("The driver runs: %s\n", describe(choice, cc, force_ptx_jit).c_str());
    verifier.expect("binaryVersion and ptxVersion agree with that",
                    ch04::attributes_agree(choice, cc, saxpy.binaryVersion, saxpy.ptxVersion));
  }

  // 4. Run and check. Small integers: every result is exact in float.
  std::vector<float> x(n), y(n);
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000);
    y[i] = static_cast<float>(i % 7);
    want[i] = 2.0 * x[i] + y[i];
  }
  tutorial::DeviceBuffer<float> d_x(n), d_y(n), d_out(n);
  d_x.upload(x);
  d_y.upload(y);  // saxpy writes y in place, so its input is its poison-free start
  ch04::saxpy(n, 2.0f, d_x.data(), d_y.data());
  CUDA_CHECK(cudaDeviceSynchronize());
  verifier.exact("saxpy, y = 2x + y on small integers, " + std::to_string(n) + " elements",
                 tutorial::max_abs_error(d_y.download().data(), want.data(), n));

  // x in {-1, 0, 1}: p(x) takes three values, each an exact small integer.
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 3 - 1);
  d_x.upload(x);
  double worst = 0.0;
  for (int degree = 1; degree <= ch04::kPolynomialKernels; ++degree) {
    d_out.poison();
    ch04::polynomial(degree, n, d_x.data(), d_out.data());
    CUDA_CHECK(cudaDeviceSynchronize());
    const double p[3] = {ch04::polynomial_reference(degree, -1.0), ch04::polynomial_reference(degree, 0.0),
                         ch04::polynomial_reference(degree, 1.0)};
    for (int i = 0; i < n; ++i) want[i] = p[i % 3];
    const double error = tutorial::max_abs_error(d_out.download().data(), want.data(), n);
    if (std::isnan(error) || error > worst) worst = error;  // once NaN, stays NaN
  }
  verifier.exact(std::to_string(ch04::kPolynomialKernels) + " polynomial kernels, degrees 1 to " +
                     std::to_string(ch04::kPolynomialKernels) + ", x in {-1, 0, 1}",
                 worst);
  return verifier.finish("04_fatbin");
}
