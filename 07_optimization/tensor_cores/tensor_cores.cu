// Chapter 07, part 5: the tensor cores. C = A * B^T (row-major; A is M x K, B is N x K) with bf16
// inputs and fp32 accumulation, in seven steps from WMMA to Hopper's TMA + wgmma in clusters, each
// verified and timed against cuBLAS (bf16 in, fp32 compute, fp32 out) at its best for each shape: the
// fastest of cublasLt's top candidates (../cublas_best.cuh), cublasGemmEx's default beside it. In the
// same run: in rounds, each row's batch right after a batch of cuBLAS's best (fair_race.cuh), its share
// taken against those cuBLAS runs, with the SM clock, power and energy per FLOP NVML saw during its batches.
//
// Checks for every step and every library row, each on a freshly poisoned C (NaN):
//  - exact: whole numbers in -32..32 are exact in bf16 (8 significant bits). Each product is a
//    whole number of size <= 1024, so every partial sum, in any order, is a whole number of size
//    <= 1024 * K. fp32 holds every whole number up to 2^24, so while 1024 * K <= 2^24 (K <= 16384,
//    checked below) the sums are exact and C must equal the reference bit for bit.
//  - random: uniform [-1, 1) rounded to bf16; the reference uses the rounded values, so input
//    rounding is not an error. Products of bf16 values are exact in fp32 (8 x 8 significant
//    bits); what is left is fp32 accumulation. K terms added in any order, each addition rounded
//    or truncated (unit 2^-23), err by at most K * 2^-23 * sum_k |a_ik * b_jk|: every checked
//    element must be within that bound (the value printed is the worst |error| / bound).
// The reference is float64 on the CPU at every element when M * N * K <= 2^30. Above that: the
// random check uses 4096 sampled elements, and the exact check compares every element with
// cuBLAS BF16, itself checked exactly against the CPU at 4096 sampled elements.
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <tutorial/buffer.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/cublas.cuh>
#include <tutorial/device.cuh>
#include <tutorial/verify.hpp>
#include <vector>

#include "../cublas_best.cuh"
#include "../lab.cuh"
#include "01_wmma.cuh"
#include "02_cp_async.cuh"
#include "03_mma_ldmatrix.cuh"
#include "fair_race.cuh"

#if TC_HAVE_SM90A
namespace tc {  // steps 4-7, compiled for sm_90a only
void launch_tma_wgmma(const Gemm& g);         // 04_tma_wgmma.cu
void launch_warp_specialized(const Gemm& g);  // 05_warp_specialized.cu
void launch_persistent(const Gemm& g);        // 06_persistent.cu
void launch_clusters(const Gemm& g);          // 07_clusters.cu
void launch_clusters_split(const Gemm& g);    // 07_clusters.cu: step 7, its last wave split along K
}  // namespace tc
#endif

namespace {

using tc::bf16;

constexpr int kExactRange = 32;  // exact inputs are whole numbers in -32..32
constexpr int kMaxSize = 16384;  // the largest --m, --n, --k: kExactRange^2 * kMaxSize = 2^24
constexpr int kSteps = 7;        // 1-3 on mma.sync (sm_80+), 4-7 on wgmma (sm_90a)

// cuBLAS is column-major. Row-major C (M x N) is column-major C^T (N x M) = B * A^T: with both
// buffers read as column-major K x N and K x M, that is op(B) = transposed, op(A) = as is ("TN").
struct Cublas {
  cublasHandle_t handle = nullptr;
  Cublas() { CUBLAS_CHECK(cublasCreate(&handle)); }
  ~Cublas() { cublasDestroy(handle); }
  void gemm(int M, int N, int K, int ld, const void* A, const void* B, cudaDataType input, float* C,
            cublasComputeType_t compute) const {
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, B, input, ld, A, input, ld,
                              &zero, C, CUDA_R_32F, N, compute, CUBLAS_GEMM_DEFAULT));
  }
};

struct Step {
  std::string name;  // starts with the step number (the libraries: none)
  std::string key;   // in the summary's figures: <key>_tflops_<shape>, <key>_pct_<shape>
  std::function<void(const tc::Gemm&)> launch;
};

/// bf16 NaN, for the padding columns K..ld-1 of A and B.
bf16 bf16_nan() {
  __nv_bfloat16_raw raw;
  raw.x = 0x7FC0;
  return bf16(raw);
}

/// \p values rounded to the nearest bf16 (and back to float, where they are exact).
std::vector<float> rounded_to_bf16(std::vector<float> values) {
  for (float& x : values) x = __bfloat162float(__float2bfloat16(x));
  return values;
}

/// rows x K values as a device matrix with row pitch ld, padding filled with \p pad.
template <typename T>
tutorial::DeviceBuffer<T> upload_padded(const std::vector<float>& values, int rows, int K, int ld, T pad) {
  std::vector<T> host(size_t(rows) * ld, pad);
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < K; ++k) host[size_t(r) * ld + k] = T(values[size_t(r) * K + k]);
  tutorial::DeviceBuffer<T> device(host.size());
  device.upload(host);
  return device;
}

/// One input set: the values on the host (dense, exactly the bf16 values, for the reference),
/// and A, B on the device in bf16 with row pitch ld.
struct Inputs {
  int M, N, K, ld;
  std::vector<float> A, B;
  tutorial::DeviceBuffer<bf16> dA, dB;
  Inputs(int m, int n, int k, std::vector<float> a, std::vector<float> b)
      : M(m),
        N(n),
        K(k),
        ld(tc::padded_ld(k)),
        A(std::move(a)),
        B(std::move(b)),
        dA(upload_padded(A, M, K, ld, bf16_nan())),
        dB(upload_padded(B, N, K, ld, bf16_nan())) {}
  tc::Gemm gemm(float* C) const { return {M, N, K, ld, dA.data(), dB.data(), C}; }
  /// float64 dot product of row i of A and row j of B, and the sum of the |products|.
  void dot(int i, int j, double& value, double& magnitude) const {
    const float* a = &A[size_t(i) * K];
    const float* b = &B[size_t(j) * K];
    value = magnitude = 0.0;
    for (int k = 0; k < K; ++k) {
      const double p = double(a[k]) * b[k];
      value += p;
      magnitude += std::fabs(p);
    }
  }
};

/// Runs \p step on \p in into C, poisoned (NaN) first, and returns C.
std::vector<float> run(const Step& step, const Inputs& in, tutorial::DeviceBuffer<float>& C) {
  C.poison();
  step.launch(in.gemm(C.data()));
  CUDA_CHECK(cudaDeviceSynchronize());
  return C.download();
}

// Up to 2^30 multiply-adds the CPU reference takes about a second.
bool fits_cpu_reference(int M, int N, int K) { return double(M) * N * K <= double(1 << 30); }

/// The elements the random check looks at: all of them, or 4096 sampled ones.
std::vector<size_t> checked_elements(int M, int N, int K) {
  const size_t count = size_t(M) * N;
  std::vector<size_t> elements;
  if (fits_cpu_reference(M, N, K)) {
    elements.resize(count);
    for (size_t e = 0; e < count; ++e) elements[e] = e;
  } else {
    for (size_t s = 0; s < 4096; ++s) elements.push_back(lab::mix(11, s) % count);
  }
  return elements;
}

struct Shape {
  int M, N, K;
  std::string label() const {
    return M == N && N == K ? std::to_string(M) : tutorial::format("%dx%dx%d", M, N, K);
  }
};

/// The exact check of every step in \p steps (steps[0] is cuBLAS BF16).
void check_exact(const Shape& s, const std::vector<const Step*>& steps, tutorial::DeviceBuffer<float>& C,
                 tutorial::Verifier& verifier) {
  const Inputs in(s.M, s.N, s.K, lab::small_integers(size_t(s.M) * s.K, -kExactRange, kExactRange, 1),
                  lab::small_integers(size_t(s.N) * s.K, -kExactRange, kExactRange, 2));
  const size_t count = size_t(s.M) * s.N;
  std::vector<float> want(count);
  const bool on_cpu = fits_cpu_reference(s.M, s.N, s.K);
  if (on_cpu) {
    double value, magnitude;
    for (size_t e = 0; e < count; ++e) {
      in.dot(int(e / s.N), int(e % s.N), value, magnitude);
      want[e] = float(value);  // a whole number below 2^24: exact
    }
  } else {
    want = run(*steps[0], in, C);
    std::vector<double> sampled(4096), cpu(4096);
    double magnitude;
    for (size_t i = 0; i < sampled.size(); ++i) {
      const size_t e = lab::mix(11, i) % count;
      in.dot(int(e / s.N), int(e % s.N), cpu[i], magnitude);
      sampled[i] = want[e];
    }
    verifier.exact(steps[0]->name + " as the reference, vs CPU float64 at 4096 sampled elements",
                   tutorial::max_abs_error(sampled.data(), cpu.data(), sampled.size()));
  }
  for (const Step* step : steps) {
    if (!on_cpu && step == steps[0]) continue;  // it is the reference: checked above
    const std::vector<float> got = run(*step, in, C);
    verifier.exact(step->name + tutorial::format(", whole numbers in -%d..%d, C poisoned", kExactRange, kExactRange),
                   tutorial::max_abs_error(got.data(), want.data(), count));
  }
}

/// Worst |got - reference| / bound over the checked elements; NaN if any element is NaN.
double worst_against_bound(const std::vector<float>& got, const std::vector<size_t>& elements,
                           const std::vector<double>& want, const std::vector<double>& bound) {
  double worst = 0.0;
  for (size_t i = 0; i < elements.size(); ++i) {
    const double error = std::fabs(double(got[elements[i]]) - want[i]);
    if (std::isnan(error)) return NAN;
    const double ratio = bound[i] > 0.0 ? error / bound[i] : (error == 0.0 ? 0.0 : INFINITY);
    worst = std::max(worst, ratio);
  }
  return worst;
}

/// The random inputs of one shape: bf16 on the device, and fp32 copies for cuBLAS's TF32 and
/// fp32 rows (bf16 values are exact in TF32 and fp32, so all rows get the same numbers).
struct RandomProblem {
  Inputs in;
  tutorial::DeviceBuffer<float> A32, B32;
  explicit RandomProblem(const Shape& s)
      : in(s.M, s.N, s.K, rounded_to_bf16(lab::uniform(size_t(s.M) * s.K, -1, 1, 3)),
           rounded_to_bf16(lab::uniform(size_t(s.N) * s.K, -1, 1, 4))),
        A32(upload_padded(in.A, s.M, s.K, in.ld, NAN)),
        B32(upload_padded(in.B, s.N, s.K, in.ld, NAN)) {}
};

/// The random check of every step and of the fp32-input library rows.
void check_random(const RandomProblem& p, const std::vector<const Step*>& steps,
                  const std::vector<Step>& fp32_rows, tutorial::DeviceBuffer<float>& C,
                  tutorial::Verifier& verifier) {
  const Inputs& in = p.in;
  const std::vector<size_t> elements = checked_elements(in.M, in.N, in.K);
  std::vector<double> want(elements.size()), bound(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    in.dot(int(elements[i] / in.N), int(elements[i] % in.N), want[i], bound[i]);
    bound[i] *= in.K * 0x1p-23;
  }
  const std::string what = tutorial::format(
      ", uniform [-1, 1) in bf16, %s: worst |error| / (K * 2^-23 * sum |a*b|)",
      elements.size() == size_t(in.M) * in.N ? "every element" : "4096 sampled elements");
  for (const Step* step : steps)
    verifier.within(step->name + what, worst_against_bound(run(*step, in, C), elements, want, bound), 1.0);
  for (const Step& row : fp32_rows)  // they read the fp32 copies: same values, same bound
    verifier.within(row.name + what, worst_against_bound(run(row, in, C), elements, want, bound), 1.0);
}

// Each batch of a row lasts at least this long (more runs for fast kernels): 100 NVML samples, and
// long enough that the power limiter's swings (100-ms batches varied by +-7%) average out.
constexpr double kBatchMs = 200.0;
constexpr int kMaxBatchRuns = 2000;

/// One row of a shape's race: its runs, and the cuBLAS BF16 runs timed right before each of its
/// batches (the cuBLAS row itself pools every cuBLAS batch of the shape).
struct Row {
  Row(const Step* s, double f) : step(s), flops(f) {}
  const Step* step;
  double flops;  // per run
  int runs = 0;  // per batch
  std::vector<double> ms, beside_ms;
  std::vector<double> round_pct;  // each round's share of the cuBLAS batch beside it (%)
  tc::Drawn drawn, beside_drawn;
  double median_ms() const { return tutorial::summarize(ms).median_ms; }
  double tflops() const { return flops / (median_ms() * 1e9); }
  /// Joules per FLOP of this row's batches, in pJ (NaN without NVML).
  double pj_per_flop() const { return 1e12 * drawn.joules() / (flops * double(ms.size())); }
};

/// The fair race of one shape: \p rounds rounds; in each, every row but cuBLAS (rows[0]) in a
/// shuffled order, each one's batch right after a batch of cuBLAS, both with the same warm-up.
void race(std::vector<Row>& rows, const tc::Gemm& g, int rounds, int runs, tc::Sampler& sampler) {
  constexpr int kWarmup = 3;
  for (Row& row : rows) row.runs = lab::batch_runs([&] { row.step->launch(g); }, kBatchMs, runs, kMaxBatchRuns);
  Row& cublas = rows[0];
  for (int round = 0; round < rounds; ++round) {
    for (size_t r : lab::round_order(rows.size(), round)) {
      Row& row = rows[r];
      std::vector<double> beside_batch, row_batch;
      const tc::Drawn beside =
          tc::time_batch([&] { cublas.step->launch(g); }, kWarmup, cublas.runs, sampler, beside_batch);
      row.drawn.add(tc::time_batch([&] { row.step->launch(g); }, kWarmup, row.runs, sampler, row_batch));
      cublas.drawn.add(beside);
      row.beside_drawn.add(beside);
      cublas.ms.insert(cublas.ms.end(), beside_batch.begin(), beside_batch.end());
      row.beside_ms.insert(row.beside_ms.end(), beside_batch.begin(), beside_batch.end());
      row.ms.insert(row.ms.end(), row_batch.begin(), row_batch.end());
      row.round_pct.push_back(tc::round_share(row_batch, row.flops, beside_batch, cublas.flops));
    }
  }
  cublas.beside_ms = cublas.ms;
  cublas.beside_drawn = cublas.drawn;
}

/// "n/a" for what NVML could not measure.
std::string or_na(double value, const char* format) {
  return std::isfinite(value) ? tutorial::format(format, value) : "n/a";
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("07_tensor_cores",
                    "bf16 matrix multiply C = A * B^T with fp32 accumulation (row-major, B is N x K): "
                    "seven tensor-core kernels from WMMA to TMA + wgmma in clusters, each verified and timed "
                    "against cuBLAS in interleaved rounds. Without --m, --n, --k: 4096^3, 6144^3, 8192^3 and "
                    "8192 x 14336 x 8192.");
  cli.add_int("m", "rows of A and C (0: the four benchmark shapes)", 0, 0, kMaxSize);
  cli.add_int("n", "columns of C, rows of B (0: the four benchmark shapes)", 0, 0, kMaxSize);
  cli.add_int("k", "columns of A and B (0: the four benchmark shapes)", 0, 0, kMaxSize);
  cli.add_int("runs", "timed runs per batch, at least (fast kernels run more: a batch lasts >= 200 ms)", 5, 1, 1000);
  // 8 rounds: about 3 minutes for the four shapes on an H100 or H200 (about 19 s per round).
  cli.add_int("rounds", "rounds of the race: each row's batch right after a cuBLAS batch, shuffled", 8, 1, 100);
  cli.add_int("step", "run only this step (1-7; 0: all); cuBLAS always runs", 0, 0, kSteps);
  cli.add_flag("last-wave-split", "also step 7 with its partial last wave split along K (Going deeper; Hopper)");
  cli.add_flag("check-only", "verify every step, time nothing");
  cli.parse_or_exit(argc, argv);
  const int m = int(cli.get_int("m")), n = int(cli.get_int("n")), k = int(cli.get_int("k"));
  if ((m == 0 || n == 0 || k == 0) && (m != 0 || n != 0 || k != 0)) {
    std::fprintf(stderr,
                 "07_tensor_cores: give --m, --n and --k together (or none of them: the four "
                 "benchmark shapes); see --help\n");
    return tutorial::kExitUsage;
  }
  const int runs = int(cli.get_int("runs")), rounds = int(cli.get_int("rounds")), only = int(cli.get_int("step"));
  const bool check_only = cli.get_flag("check-only");
  [[maybe_unused]] const bool split = cli.get_flag("last-wave-split");  // used where 4-7 are built
  const std::vector<Shape> shapes =
      m > 0 ? std::vector<Shape>{{m, n, k}}
            : std::vector<Shape>{{4096, 4096, 4096}, {6144, 6144, 6144}, {8192, 8192, 8192}, {8192, 14336, 8192}};

  // bf16 mma, cp.async and ldmatrix need compute capability 8.0, and the build holds no code below
  // it: say so here, before require_gpu() looks for code and suggests a rebuild that cannot help.
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess && major < 8) {
    std::fprintf(stderr,
                 "No usable CUDA GPU: the tensor-core steps need compute capability 8.0 or newer "
                 "(bf16 mma.sync, cp.async); device 0 is %d.x.\nSkipping (exit code %d).\n",
                 major, tutorial::kExitNoGpu);
    return tutorial::kExitNoGpu;
  }
  const tutorial::DeviceInfo gpu = tutorial::require_gpu();
  std::printf("C (M x N, fp32) = A (M x K, bf16) * B^T (B: N x K, bf16), row-major, fp32 accumulation\n\n");

  const Cublas cublas;
  std::unique_ptr<lab::CublasBest> best;  // cuBLAS's best for the current shape (chosen below)
  const auto library = [&](cudaDataType input, cublasComputeType_t compute) {
    return [&cublas, input, compute](const tc::Gemm& g) {
      cublas.gemm(g.M, g.N, g.K, g.ld, g.A, g.B, input, g.C, compute);
    };
  };
  std::vector<Step> all = {
      {"cuBLAS BF16 best (fastest of cublasLt's top 8)", "cublas_bf16",
       [&best](const tc::Gemm& g) { best->run(1.0f, g.B, g.A, 0.0f, g.C); }},
      {"cuBLAS BF16 cublasGemmEx (its default)", "cublas_bf16_default", library(CUDA_R_16BF, CUBLAS_COMPUTE_32F)},
      {"1 WMMA, global memory", "step1", tc::launch_wmma_naive},
      {"2 cp.async, 4-stage ring", "step2", tc::launch_cp_async_wmma},
      {"3 mma.sync + ldmatrix, swizzled", "step3", tc::launch_mma_ldmatrix},
  };
  std::string hopper_skipped;
#if TC_HAVE_SM90A
  if (gpu.cc_major == 9 && gpu.cc_minor == 0) {
    all.push_back({"4 TMA + wgmma, one warpgroup", "step4", tc::launch_tma_wgmma});
    all.push_back({"5 producer + 2 consumer warpgroups", "step5", tc::launch_warp_specialized});
    all.push_back({"6 persistent, tile order, TMA store", "step6", tc::launch_persistent});
    all.push_back({"7 clusters of 2, TMA multicast", "step7", tc::launch_clusters});
    if (split) all.push_back({"x7 step 7, last wave split along K", "step7_split", tc::launch_clusters_split});
  } else {
    hopper_skipped = tutorial::format(
        "Steps 4-7 (TMA + wgmma) skipped: they need a Hopper GPU (sm_90a, compute capability 9.0); %s is %d.%d.",
        gpu.name.c_str(), gpu.cc_major, gpu.cc_minor);
  }
#else
  hopper_skipped =
      "Steps 4-7 (TMA + wgmma) skipped: this build holds no sm_90a code (it needs CUDA 12.8 or newer "
      "and 90 in CMAKE_CUDA_ARCHITECTURES, e.g. -DCMAKE_CUDA_ARCHITECTURES=90).";
#endif
  const bool hopper_asked = only == 0 || only >= 4;
  if (!hopper_skipped.empty() && hopper_asked) std::printf("%s\n\n", hopper_skipped.c_str());
  std::vector<const Step*> steps;  // cuBLAS BF16, and the steps asked for
  for (size_t s = 0; s < all.size(); ++s)
    if (s < 2 || only == 0 || std::atoi(all[s].name.c_str()) == only || all[s].key == "step7_split")
      steps.push_back(&all[s]);
  // The libraries on the fp32 problem, for scale: TF32 tensor cores, and fp32 on the FMA units.
  // They read fp32 copies of A and B (the current shape's, set below) instead of the Gemm's.
  const float* a32 = nullptr;
  const float* b32 = nullptr;
  const std::vector<Step> fp32_rows = {
      {"cuBLAS TF32 (fp32 in, TF32 tensor cores)", "cublas_tf32",
       [&](const tc::Gemm& g) {
         cublas.gemm(g.M, g.N, g.K, g.ld, a32, b32, CUDA_R_32F, g.C, CUBLAS_COMPUTE_32F_FAST_TF32);
       }},
      {"cuBLAS FP32 (pedantic, no tensor cores)", "cublas_fp32",
       [&](const tc::Gemm& g) {
         cublas.gemm(g.M, g.N, g.K, g.ld, a32, b32, CUDA_R_32F, g.C, CUBLAS_COMPUTE_32F_PEDANTIC);
       }},
  };

  tutorial::Verifier verifier;
  int max_k = 0;
  for (const Shape& s : shapes) max_k = std::max(max_k, s.K);
  verifier.expect(tutorial::format("exact inputs: %d^2 * K = %lld <= 2^24, so every partial sum is a whole "
                                   "number that fp32 holds exactly",
                                   kExactRange, (long long)kExactRange * kExactRange * max_k),
                  (long long)kExactRange * kExactRange * max_k <= (1LL << 24));

  // The ceiling of mma.sync on this GPU (steps 1-3 are built on it), checked like a step.
  const int peak_blocks = gpu.sm_count * 4;
  tutorial::DeviceBuffer<float> peak_out(size_t(peak_blocks) * tc::kPeakThreads);
  peak_out.poison();
  const double peak_flops = tc::launch_mma_sync_peak(peak_out.data(), peak_blocks);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> peak_sums = peak_out.download();
  verifier.exact("mma.sync ceiling kernel, operands 1.0: each thread's sum of its accumulators",
                 tutorial::max_abs_error_from(peak_sums.data(), tc::kPeakSum, peak_sums.size()));
  const Step peak{"mma.sync alone: operands in registers, no loads", "mma_sync_peak",
                  [&](const tc::Gemm&) { tc::launch_mma_sync_peak(peak_out.data(), peak_blocks); }};
  std::unique_ptr<tc::Nvml> nvml;  // only when timing: checks alone need no sampler thread
  std::unique_ptr<tc::Sampler> sampler;
  if (!check_only) {
    nvml = std::make_unique<tc::Nvml>();
    sampler = std::make_unique<tc::Sampler>(*nvml);
    std::printf("NVML during every timed batch: SM clock, clock-event reasons, power (%s)\n", nvml->power_source());
    std::printf("\"SW power cap\": share of a row's NVML readings (only those made inside its own batches) with the\n"
                "software power-cap reason set, over whole batches and (in brackets) their second halves;\n"
                "\"Other limits\": thermal, hardware slowdown, power brake, sync boost or display clock.\n");
  }

  std::vector<double> lowest_pct(kSteps + 1, INFINITY);  // per step: its lowest share of cuBLAS BF16
  double lowest_split = INFINITY;  // step 7 with its last wave split (--last-wave-split)
  double worst_vs_previous = INFINITY;  // the lowest (step n's share) / (step n-1's share) at any shape, in %
  for (const Shape& s : shapes) {
    std::printf("\n## M = %d, N = %d, K = %d\n\n", s.M, s.N, s.K);
    // Device: A and B in bf16 (exact and random inputs) and in fp32 (random), and C.
    const double ld = tc::padded_ld(s.K);
    const double bytes = 8.0 * (s.M + s.N) * ld + 4.0 * s.M * s.N;
    tutorial::require_device_memory(size_t(bytes), "A, B and C for --m, --n, --k");
    tutorial::DeviceBuffer<float> C(size_t(s.M) * s.N);
    const RandomProblem random(s);
    // Row-major C (M x N) is column-major C^T = B * A^T: B's buffer (K x N, column-major) transposed.
    const int pitch = random.in.ld;
    best = std::make_unique<lab::CublasBest>(CUBLAS_OP_T, CUBLAS_OP_N, lab::LtMatrix{CUDA_R_16BF, s.K, s.N, pitch},
                                             lab::LtMatrix{CUDA_R_16BF, s.K, s.M, pitch},
                                             lab::LtMatrix{CUDA_R_32F, s.N, s.M, s.N}, CUBLAS_COMPUTE_32F);
    // Chosen before the checks (on the random inputs), so that they check the algorithm that races.
    best->choose(random.in.dB.data(), random.in.dA.data(), C.data(), !check_only);
    if (!check_only) std::printf("cuBLAS's best at this shape: %s.\n", best->chosen().c_str());
    check_exact(s, steps, C, verifier);
    a32 = random.A32.data();
    b32 = random.B32.data();
    check_random(random, steps, fp32_rows, C, verifier);
    if (check_only) continue;

    // Timing: the random inputs (never zeros: they can run faster than real data).
    const double flops = 2.0 * s.M * s.N * s.K;
    std::vector<double> shape_pct(kSteps + 1, NAN);  // each step's share at this shape
    std::vector<Row> rows;
    for (const Step* step : steps) rows.emplace_back(step, flops);
    rows.emplace_back(&peak, peak_flops);
    for (const Step& row : fp32_rows) rows.emplace_back(&row, flops);
    // A control: what NVML reads with nothing running (does the cap reason ever read clear?).
    const tc::Drawn idle = sampler->idle(300);
    std::printf("\nNVML, GPU idle for 300 ms before this race: %s, %s, SW power cap in %s of %d readings\n",
                or_na(idle.mean_mhz(), "%.0f MHz").c_str(), or_na(idle.mean_watts(), "%.0f W").c_str(),
                or_na(100.0 * idle.sw_cap_share(), "%.0f%%").c_str(), idle.samples);
    race(rows, random.in.gemm(C.data()), rounds, runs, *sampler);

    std::printf("\n### M = %d, N = %d, K = %d: %.1f GFLOP per run, %d rounds\n\n", s.M, s.N, s.K, flops / 1e9, rounds);
    tutorial::Table table({"Step", "Time", "TFLOP/s", "% of cuBLAS BF16 beside it", "rounds: lowest-highest",
                           "cuBLAS beside it", "SM clock", "Power", "SW power cap (2nd half)", "Other limits",
                           "Energy / FLOP", "vs cuBLAS beside", "runs"});
    const std::string label = s.label();
    const double ceiling = rows[steps.size()].tflops();
    verifier.figure("cublas_bf16_candidate_" + label, best->chosen_index());
    for (const Row& row : rows) {
      const double beside_tflops = flops / (tutorial::summarize(row.beside_ms).median_ms * 1e9);
      const double pct = 100.0 * row.tflops() / beside_tflops;
      const tc::Spread rounds_pct = tc::spread(row.round_pct);
      const tc::Drawn& d = row.drawn;
      const double beside_pj = 1e12 * row.beside_drawn.joules() / (flops * double(row.beside_ms.size()));
      table.add_row({row.step->name, tutorial::format_time(row.median_ms()), tutorial::format("%.1f", row.tflops()),
                     tutorial::format("%.1f%%", pct),
                     &row == &rows[0] ? "" : tutorial::format("%.1f-%.1f%%", rounds_pct.low, rounds_pct.high),
                     tutorial::format_time(tutorial::summarize(row.beside_ms).median_ms),
                     or_na(d.mean_mhz(), "%.0f MHz"), or_na(d.mean_watts(), "%.0f W"),
                     or_na(100.0 * d.sw_cap_share(), "%.0f%%") + or_na(100.0 * d.late_sw_cap_share(), " (%.0f%%)"),
                     or_na(100.0 * d.other_limits_share(), "%.0f%%"), or_na(row.pj_per_flop(), "%.2f pJ"),
                     or_na(100.0 * row.pj_per_flop() / beside_pj, "%.0f%%"),
                     tutorial::format("%d x %d", rounds, row.runs)});
      verifier.figure(row.step->key + "_tflops_" + label, std::round(row.tflops()));
      if (std::isfinite(row.drawn.mean_mhz())) {
        verifier.figure(row.step->key + "_mhz_" + label, std::round(row.drawn.mean_mhz()));
        verifier.figure(row.step->key + "_watts_" + label, std::round(row.drawn.mean_watts()));
        verifier.figure(row.step->key + "_pj_per_flop_" + label, std::round(row.pj_per_flop() * 100.0) / 100.0);
        verifier.figure(row.step->key + "_sw_cap_pct_" + label, std::round(100.0 * d.sw_cap_share()));
      }
      if (&row == &rows[0]) continue;
      verifier.figure(row.step->key + "_pct_" + label, std::round(pct * 10.0) / 10.0);
      verifier.figure(row.step->key + "_pct_low_" + label, std::round(rounds_pct.low * 10.0) / 10.0);
      verifier.figure(row.step->key + "_pct_high_" + label, std::round(rounds_pct.high * 10.0) / 10.0);
      const int number = std::atoi(row.step->name.c_str());
      if (number > 0) lowest_pct[number] = std::min(lowest_pct[number], pct);
      if (row.step->key == "step7_split") lowest_split = std::min(lowest_split, pct);
      if (number > 1 && std::isfinite(shape_pct[number - 1]))  // each step against the one before it
        worst_vs_previous = std::min(worst_vs_previous, 100.0 * pct / shape_pct[number - 1]);
      if (number > 0) shape_pct[number] = pct;
      if (number > 0 && number < 4)  // built on mma.sync: their share of its ceiling
        verifier.figure(row.step->key + "_pct_of_mma_sync_" + label, std::round(1000.0 * row.tflops() / ceiling) / 10.0);
    }
    table.print();
  }

  if (!check_only) {
    std::printf("\nGoals: each step's lowest share of cuBLAS BF16's best over the shapes above (each share against the "
                "cuBLAS batches timed beside that step).\n");
    const struct {
      int step;
      const char* what;
      double at_least;
    } goals[] = {{2, "step 2 (cp.async, 4-stage ring) vs cuBLAS BF16's best", 40},
                 {3, "step 3 (mma.sync + ldmatrix) vs cuBLAS BF16's best", 60},
                 {3, "step 3 (mma.sync + ldmatrix) vs cuBLAS BF16's best, moonshot", 70},
                 {4, "step 4 (TMA + wgmma, one warpgroup) vs cuBLAS BF16's best", 55},
                 {5, "step 5 (producer + consumer warpgroups) vs cuBLAS BF16's best", 85},
                 {6, "step 6 (persistent, TMA store) vs cuBLAS BF16's best", 97},
                 {7, "step 7 (clusters, TMA multicast) vs cuBLAS BF16's best", 100},
                 {7, "step 7 (clusters, TMA multicast) vs cuBLAS BF16's best, moonshot", 105}};
    for (const auto& goal : goals)
      if (std::isfinite(lowest_pct[goal.step]))
        verifier.goal(goal.what, std::round(lowest_pct[goal.step] * 10.0) / 10.0, goal.at_least, "%");
    if (std::isfinite(worst_vs_previous))  // 1% allowance for noise
      verifier.goal("every step vs the step before it, lowest ratio of shares at any shape",
                    std::round(worst_vs_previous * 10.0) / 10.0, 99, "%");
    if (std::isfinite(lowest_split))  // after the others: their positions stay what the pages quote
      verifier.goal("step 7 with its last wave split along K (Going deeper) vs cuBLAS BF16's best",
                    std::round(lowest_split * 10.0) / 10.0, 100, "%");
  }
  if (!hopper_skipped.empty() && hopper_asked) std::printf("\n%s\n", hopper_skipped.c_str());
  return verifier.finish("07_tensor_cores");
}
