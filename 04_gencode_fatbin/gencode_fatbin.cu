// Chapter 04: one program, built six ways.
//
// CMakeLists.txt compiles this file and kernels.cu into six programs that differ
// only in the GPU code nvcc embeds in them: machine code (a cubin) for one
// architecture, PTX only, a fatbinary with both, nvcc's default, and two
// hand-written -gencode lines. Each program
//   1. times how long the driver takes to load its kernels: PTX must be
//      compiled for the GPU first (just-in-time, JIT),
//   2. asks the driver what it loaded (cudaFuncGetAttributes) and says what
//      that tells: which machine code runs, and the PTX it was compiled from,
//   3. given what the binary embeds (--embeds, as cuobjdump lists it), says
//      which code the driver's rule picks and checks that the driver did,
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

// Which of the six builds this is, as CMakeLists.txt names it (see ch04_add_build
// there); a build by hand, as in the README, needs no -D flag.
#ifndef CH04_BUILD
#define CH04_BUILD "gencode_fatbin"
#define CH04_RECIPE "built by hand"
#endif
const char* const kBuild = CH04_BUILD;    // e.g. "ptx_only"
const char* const kRecipe = CH04_RECIPE;  // e.g. "CUDA_ARCHITECTURES 90-virtual"

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

std::string describe(const ch04::Choice& choice, const ch04::Embedded& embedded, int cc, bool force_ptx_jit) {
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
      else if (embedded.machine_code.empty())
        why = "this build has no machine code";
      else
        why = "its machine code (" + ch04::list_architectures(embedded.machine_code, "sm_") +
              ") does not run on a " + gpu + " GPU";
      return "PTX compute_" + arch + ", JIT-compiled by the driver for sm_" + std::to_string(cc) + " (" + why + ")";
    }
    default:
      return "nothing: this build has no code for a " + gpu + " GPU";
  }
}

// What the attributes alone say about where the machine code that runs came from.
std::string origin_in_words(int binary_version, int cc, bool force_ptx_jit) {
  switch (ch04::origin(binary_version, cc, force_ptx_jit)) {
    case ch04::Origin::kJit:
      return "JIT-compiled at load: CUDA_FORCE_PTX_JIT=1 makes the driver ignore machine code";
    case ch04::Origin::kBinary:
      return "a cubin from the binary: a JIT would compile for this GPU's own sm_" + std::to_string(cc);
    default:
      return "a cubin from the binary or a JIT at load: the attributes read the same for both";
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string program = std::string("04_") + kBuild;
  tutorial::Cli cli(program, "Chapter 04: saxpy and 32 polynomial kernels; reports which GPU code the driver "
                             "runs (cudaFuncGetAttributes) and how long loading it took.");
  cli.add_int("n", "number of elements", 1 << 20, 1, 1 << 28);
  cli.add_string("embeds", "what this binary embeds, as cuobjdump --list-elf --list-ptx lists it "
                           "(e.g. sm_80,sm_90,compute_90): the program checks the driver's choice", "");
  cli.parse_or_exit(argc, argv);
  const int n = static_cast<int>(cli.get_int("n"));
  const std::string embeds = cli.get_string("embeds");
  ch04::Embedded embedded;
  std::string bad_list;
  if (!embeds.empty() && !ch04::parse_embedded(embeds, embedded, bad_list)) {
    std::fputs(cli.error_line("--embeds: " + bad_list).c_str(), stderr);
    return tutorial::kExitUsage;
  }

  std::printf("%s: one program, six builds (chapter 04). This one: %s\n", program.c_str(), kRecipe);
  if (!embeds.empty())
    std::printf("  embeds (--embeds): machine code %s; PTX %s\n",
                ch04::list_architectures(embedded.machine_code, "sm_").c_str(),
                ch04::list_architectures(embedded.ptx, "compute_").c_str());
  const std::string loading = environment("CUDA_MODULE_LOADING");
  if (loading.empty())
    std::printf("  CUDA_MODULE_LOADING: not set (%s)\n", kModuleLoadingDefault);
  else
    std::printf("  CUDA_MODULE_LOADING: %s\n", loading.c_str());
  const bool force_ptx_jit = environment("CUDA_FORCE_PTX_JIT") == "1";
  if (force_ptx_jit)
    std::printf("  CUDA_FORCE_PTX_JIT=1: the driver ignores all machine code and JIT-compiles PTX.\n");

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
  // [excerpt:load]
  const std::vector<ch04::Kernel> kernels = ch04::all_kernels();
  std::vector<cudaFuncAttributes> attributes(kernels.size());
  const double load_ms = wall_ms([&] {
    for (size_t k = 0; k < kernels.size(); ++k)
      CUDA_CHECK(cudaFuncGetAttributes(&attributes[k], kernels[k].function));
  });
  // [/excerpt:load]
  std::printf("Startup (CUDA context and main module): %.2f ms\n", startup_ms);
  std::printf("Kernel module load (kernels.cu, %zu kernels): %.2f ms\n", kernels.size(), load_ms);

  // 3. What the driver loaded. binaryVersion: the machine code that runs;
  //    ptxVersion: the virtual architecture that code was compiled from.
  // [excerpt:attributes]
  const int cc = gpu.cc_major * 10 + gpu.cc_minor;
  const cudaFuncAttributes& saxpy = attributes[0];
  std::printf("cudaFuncGetAttributes(saxpy): binaryVersion %d, ptxVersion %d\n", saxpy.binaryVersion,
              saxpy.ptxVersion);
  std::printf("The GPU runs sm_%d machine code, compiled from compute_%d PTX\n  (%s)\n", saxpy.binaryVersion,
              saxpy.ptxVersion, origin_in_words(saxpy.binaryVersion, cc, force_ptx_jit).c_str());
  // [/excerpt:attributes]
  tutorial::Verifier verifier;
  if (!embeds.empty()) {
    const ch04::Choice choice = ch04::choose(embedded, cc, force_ptx_jit);
    std::printf("The driver runs: %s\n", describe(choice, embedded, cc, force_ptx_jit).c_str());
    verifier.expect("binaryVersion and ptxVersion agree with the driver's rule for --embeds " + embeds,
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
