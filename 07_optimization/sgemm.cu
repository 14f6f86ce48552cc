// Chapter 07, part 3: SGEMM (fp32 C = alpha * A * B + beta * C, row-major), from a naive kernel
// to warp tiling and double buffering, step by step against cuBLAS in the same run: cuBLAS at its
// best for the shape (the fastest of cublasLt's top candidates, cublas_best.cuh), raced in rounds,
// each step's batch right after a batch of cuBLAS, in a shuffled order per round; each step's share
// is taken against the cuBLAS batches beside it, and the rounds' lowest and highest shares are its
// spread.
//
// Step 8 runs in five tile configurations (8a-8e, sgemm/08_tile_sweep.cuh); each is a row of
// the table, checked like any step, and the fastest is reported as step 8's result.
//
// Checks for every step, each on a freshly prepared C:
//  - exact: A and B hold whole numbers in -2..2, so every partial dot product is a whole number
//    of size <= 4 * K, which float holds exactly in any order of addition. With beta = 0 and C
//    poisoned (NaN) first, every element must be written, and equal the reference bit for bit.
//  - random: A, B, C uniform in [-1, 1), alpha = 1.5, beta = -0.5, relative error (2-norm) <= 1e-5
//    against the reference.
// The reference is a float64 product on the CPU when M * N * K <= 2^30. Above that (4096^3 would
// take minutes) it is cuBLAS's best, itself checked against the CPU on sampled elements of C.
#include <cublas_v2.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <tutorial/buffer.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/cublas.cuh>
#include <tutorial/device.cuh>
#include <tutorial/verify.hpp>

#include "cublas_best.cuh"
#include "lab.cuh"
#include "sgemm/01_naive.cuh"
#include "sgemm/02_coalesced.cuh"
#include "sgemm/03_shared_tiling.cuh"
#include "sgemm/04_1d_blocktiling.cuh"
#include "sgemm/05_2d_blocktiling.cuh"
#include "sgemm/06_vectorized.cuh"
#include "sgemm/07_warptiling.cuh"
#include "sgemm/08_tile_sweep.cuh"
#include "sgemm/09_register_prefetch.cuh"
#include "tensor_cores/power_window.hpp"  // tc::spread, tc::round_share: the race's statistics

namespace {

// cuBLAS, in one math mode. cuBLAS is column-major; a row-major M x N matrix is the same memory
// as a column-major N x M matrix, its transpose. So ask for C^T = B^T * A^T (N x M): no copies.
struct Cublas {
  cublasHandle_t handle = nullptr;
  explicit Cublas(cublasMath_t mode) {
    CUBLAS_CHECK(cublasCreate(&handle));
    CUBLAS_CHECK(cublasSetMathMode(handle, mode));
  }
  ~Cublas() { cublasDestroy(handle); }
  void operator()(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                  float* C) const {
    CUBLAS_CHECK(
        cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N));
  }
};

struct Step {
  std::string name;  // starts with the step number (cuBLAS: none)
  std::function<void(int, int, int, float, const float*, const float*, float, float*)> launch;
  const sgemm::TileConfig* tiles = nullptr;  // step 8's configurations: what to list about them
};

// Row-major float64 product alpha * A * B + beta * C0 on the CPU (i-k-j order: the inner loop
// runs along rows of B and C, contiguous in memory).
std::vector<double> cpu_gemm(int M, int N, int K, double alpha, const std::vector<float>& A,
                             const std::vector<float>& B, double beta, const std::vector<float>& C0) {
  std::vector<double> C(size_t(M) * N), row(N);
  for (int i = 0; i < M; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int k = 0; k < K; ++k) {
      const double a = A[size_t(i) * K + k];
      const float* b = &B[size_t(k) * N];
      for (int j = 0; j < N; ++j) row[j] += a * b[j];
    }
    for (int j = 0; j < N; ++j)
      C[size_t(i) * N + j] = alpha * row[j] + (beta == 0.0 ? 0.0 : beta * C0[size_t(i) * N + j]);
  }
  return C;
}

// One element of the same product, for spot checks at sizes too large for cpu_gemm.
double cpu_element(int N, int K, double alpha, const std::vector<float>& A, const std::vector<float>& B,
                   double beta, const std::vector<float>& C0, int i, int j) {
  double dot = 0.0;
  for (int k = 0; k < K; ++k) dot += double(A[size_t(i) * K + k]) * B[size_t(k) * N + j];
  return alpha * dot + (beta == 0.0 ? 0.0 : beta * C0[size_t(i) * N + j]);
}

// One test problem on the device, with its inputs kept on the host for reference checks.
struct Problem {
  int M, N, K;
  float alpha, beta;
  std::vector<float> A, B, C0;  // host copies
  tutorial::DeviceBuffer<float> dA, dB, dC0;

  Problem(int m, int n, int k, float al, float be, std::vector<float> a, std::vector<float> b,
          std::vector<float> c0)
      : M(m),
        N(n),
        K(k),
        alpha(al),
        beta(be),
        A(std::move(a)),
        B(std::move(b)),
        C0(std::move(c0)),
        dA(A.size()),
        dB(B.size()),
        dC0(C0.size()) {
    dA.upload(A);
    dB.upload(B);
    dC0.upload(C0);
  }
  // Runs \p step into C: poisoned when beta == 0 (C is output only), else a copy of C0.
  std::vector<float> run(const Step& step, tutorial::DeviceBuffer<float>& C) const {
    if (beta == 0.0f)
      C.poison();
    else
      CUDA_CHECK(cudaMemcpy(C.data(), dC0.data(), C.bytes(), cudaMemcpyDeviceToDevice));
    step.launch(M, N, K, alpha, dA.data(), dB.data(), beta, C.data());
    CUDA_CHECK(cudaDeviceSynchronize());
    return C.download();
  }
};

// Up to 2^30 multiply-adds (1024^3) the CPU takes about a second; 4096^3 would take minutes.
bool fits_cpu_reference(int M, int N, int K) { return double(M) * N * K <= double(1 << 30); }

// The reference result for \p p: float64 on the CPU if small enough, else \p reference_step
// (cuBLAS pedantic), spot-checked against the CPU at up to 4096 sampled elements.
std::vector<double> reference(const Problem& p, const Step& reference_step,
                              tutorial::DeviceBuffer<float>& C, bool exact,
                              tutorial::Verifier& verifier) {
  if (fits_cpu_reference(p.M, p.N, p.K)) return cpu_gemm(p.M, p.N, p.K, p.alpha, p.A, p.B, p.beta, p.C0);
  const std::vector<float> got = p.run(reference_step, C);
  const size_t count = got.size(), samples = std::min<size_t>(count, 4096);
  std::vector<double> want(samples), sampled(samples);
  for (size_t s = 0; s < samples; ++s) {
    const size_t e = lab::mix(11, s) % count;
    want[s] = cpu_element(p.N, p.K, p.alpha, p.A, p.B, p.beta, p.C0, int(e / p.N), int(e % p.N));
    sampled[s] = got[e];
  }
  const std::string what = reference_step.name + " as the reference, vs CPU float64 at sampled elements";
  if (exact)
    verifier.exact(what, tutorial::max_abs_error(sampled.data(), want.data(), samples));
  else
    verifier.within(what, tutorial::relative_error(sampled.data(), want.data(), samples), 1e-5);
  return std::vector<double>(got.begin(), got.end());
}

// Each batch lasts at least this long (more runs for fast steps), at most kMaxBatchRuns runs.
constexpr double kBatchMs = 200.0;
constexpr int kMaxBatchRuns = 2000;
constexpr int kWarmup = 2;  // untimed runs before every batch, both sides

/// One row of the race: its runs, and the cuBLAS runs timed right before each of its batches.
struct Row {
  explicit Row(const Step* s) : step(s) {}
  const Step* step;
  int runs = 0;                   // per batch
  std::vector<double> ms, beside_ms;
  std::vector<double> round_pct;  // each round's share of the cuBLAS batch beside it (%)
  double median_ms() const { return tutorial::summarize(ms).median_ms; }
  double pct() const { return 100.0 * tutorial::summarize(beside_ms).median_ms / median_ms(); }
};

/// The race: \p rounds rounds; in each, every row but cuBLAS's best (rows[0]) in a shuffled order,
/// each one's batch right after a batch of cuBLAS's best, both with the same warm-up.
template <typename Launch>
void race(std::vector<Row>& rows, Launch&& launch, int rounds, int min_runs) {
  for (Row& row : rows) row.runs = lab::batch_runs([&] { launch(*row.step); }, kBatchMs, min_runs, kMaxBatchRuns);
  Row& cublas = rows[0];
  for (int round = 0; round < rounds; ++round) {
    for (size_t r : lab::round_order(rows.size(), round)) {
      const auto batch = [&](const Row& row) {
        return tutorial::time_gpu_runs([&] { launch(*row.step); }, tutorial::TimingPlan{kWarmup, row.runs}, nullptr,
                                       [] {}, [] {});
      };
      const std::vector<double> beside = batch(cublas), mine = batch(rows[r]);
      cublas.ms.insert(cublas.ms.end(), beside.begin(), beside.end());
      rows[r].beside_ms.insert(rows[r].beside_ms.end(), beside.begin(), beside.end());
      rows[r].ms.insert(rows[r].ms.end(), mine.begin(), mine.end());
      rows[r].round_pct.push_back(tc::round_share(mine, 1.0, beside, 1.0));
    }
  }
  cublas.beside_ms = cublas.ms;
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli(
      "07_sgemm",
      "fp32 matrix multiply C = alpha*A*B + beta*C (row-major), eight kernels from naive to "
      "double buffering (the last in five tile configurations), each verified and raced against "
      "cuBLAS's best for the shape (the fastest of cublasLt's top 8) in interleaved rounds.");
  cli.add_int("m", "rows of A and C", 4096, 1, sgemm::kMaxSide);
  cli.add_int("n", "columns of B and C", 4096, 1, sgemm::kMaxSide);
  cli.add_int("k", "columns of A, rows of B", 4096, 1, sgemm::kMaxSide);
  cli.add_int("runs", "timed runs per batch, at least (fast steps run more: a batch lasts >= 200 ms)", 1, 1, 1000);
  cli.add_int("rounds", "rounds of the race: each step's batch right after a cuBLAS batch, shuffled", 5, 1, 100);
  cli.add_int("step",
              "run only this step (1-8, 8 with all its tile configurations; 0: all); cuBLAS always runs",
              0, 0, 8);
  cli.add_flag("register-prefetch", "also 8f: 8d with its fragments double-buffered in registers (Going deeper)");
  cli.add_flag("check-only", "verify every step, time nothing");
  cli.parse_or_exit(argc, argv);
  const int M = static_cast<int>(cli.get_int("m")), N = static_cast<int>(cli.get_int("n")),
            K = static_cast<int>(cli.get_int("k"));
  const int runs = static_cast<int>(cli.get_int("runs")), rounds = static_cast<int>(cli.get_int("rounds"));
  const int only = static_cast<int>(cli.get_int("step"));
  const bool check_only = cli.get_flag("check-only"), prefetch = cli.get_flag("register-prefetch");

  tutorial::require_gpu();
  // Device: A, B, C0 of one test problem, C, and the timing inputs A and B.
  const double floats = 2.0 * (double(M) * K + double(K) * N + double(M) * N) + double(M) * N;
  tutorial::require_device_memory(size_t(floats * sizeof(float)), "A, B and C for --m, --n, --k");

  std::printf("SGEMM, row-major: C (%d x %d) = alpha * A (%d x %d) * B (%d x %d) + beta * C\n\n", M, N,
              M, K, K, N);
  // Row-major C (M x N) is column-major C^T = B^T * A^T: B's buffer is the first operand (N x K).
  lab::CublasBest best(CUBLAS_OP_N, CUBLAS_OP_N, {CUDA_R_32F, N, K, N}, {CUDA_R_32F, K, M, K},
                       {CUDA_R_32F, N, M, N}, CUBLAS_COMPUTE_32F);
  const size_t a_size = size_t(M) * K, b_size = size_t(K) * N, c_size = size_t(M) * N;
  // Timing inputs: random, alpha = 1, beta = 0 (the usual benchmark), 2*M*N*K flops a run.
  tutorial::DeviceBuffer<float> dA(check_only ? 0 : a_size), dB(check_only ? 0 : b_size);
  tutorial::DeviceBuffer<float> C(c_size);
  if (!check_only) {
    dA.upload(lab::uniform(a_size, -1, 1, 6));
    dB.upload(lab::uniform(b_size, -1, 1, 7));
  }
  // Chosen before the checks, so that they check the algorithm that races.
  best.choose(dB.data(), dA.data(), C.data(), !check_only);
  if (!check_only) std::printf("cuBLAS's best at this shape: %s.\n\n", best.chosen().c_str());

  const Cublas pedantic(CUBLAS_PEDANTIC_MATH), default_math(CUBLAS_DEFAULT_MATH);
  const std::vector<sgemm::TileConfig> sweep = sgemm::tile_sweep();
  std::vector<Step> all = {
      {"cuBLAS best (cublasLt, fastest of top 8)",
       [&best](int, int, int, float alpha, const float* A, const float* B, float beta, float* out) {
         best.run(alpha, B, A, beta, out);
       }},
      {"cuBLAS, pedantic fp32", std::cref(pedantic)},
      {"cuBLAS, default math", std::cref(default_math)},
      {"1 naive", sgemm::launch_naive},
      {"2 coalesced", sgemm::launch_coalesced},
      {"3 shared-memory tiling", sgemm::launch_shared_tiling},
      {"4 1-D register tiling", sgemm::launch_1d_blocktiling},
      {"5 2-D register tiling", sgemm::launch_2d_blocktiling},
      {"6 float4, transposed A tile", sgemm::launch_vectorized},
      {"7 warp tiling", sgemm::launch_warptiling},
  };
  constexpr size_t kLibraries = 3;  // the cuBLAS rows: always run, the limit
  for (const sgemm::TileConfig& tiles : sweep)
    all.push_back({tiles.label + " double buffering", tiles.launch, &tiles});
  if (prefetch) all.push_back({"8f 8d, fragments prefetched in registers", sgemm::launch_register_prefetch});
  std::vector<const Step*> steps;  // cuBLAS, and the steps asked for
  for (size_t s = 0; s < all.size(); ++s)
    if (s < kLibraries || only == 0 || std::atoi(all[s].name.c_str()) == only) steps.push_back(&all[s]);

  tutorial::Verifier verifier;
  const bool cpu_reference = fits_cpu_reference(M, N, K);
  {
    const Problem exact(M, N, K, 1.0f, 0.0f, lab::small_integers(a_size, -2, 2, 1),
                        lab::small_integers(b_size, -2, 2, 2), std::vector<float>(c_size, 0.0f));
    const std::vector<double> want = reference(exact, all[0], C, true, verifier);
    for (const Step* step : steps) {
      if (!cpu_reference && step == &all[0]) continue;  // it is the reference: checked above
      const std::vector<float> got = exact.run(*step, C);
      verifier.exact(step->name + ", whole numbers in -2..2, beta = 0, C poisoned",
                     tutorial::max_abs_error(got.data(), want.data(), c_size));
    }
  }
  {
    const Problem random(M, N, K, 1.5f, -0.5f, lab::uniform(a_size, -1, 1, 3),
                         lab::uniform(b_size, -1, 1, 4), lab::uniform(c_size, -1, 1, 5));
    const std::vector<double> want = reference(random, all[0], C, false, verifier);
    for (const Step* step : steps) {
      if (!cpu_reference && step == &all[0]) continue;
      const std::vector<float> got = random.run(*step, C);
      // TF32 keeps 10 mantissa bits: its error here would be ~1e-3, far above the tolerance. So
      // this also tells whether cuBLAS used TF32 tensor cores for SGEMM.
      verifier.within(step->name + ", uniform [-1, 1), alpha = 1.5, beta = -0.5",
                      tutorial::relative_error(got.data(), want.data(), c_size), 1e-5);
    }
  }
  if (check_only) return verifier.finish("07_sgemm");

  std::vector<Row> rows;
  for (const Step* step : steps) rows.emplace_back(step);
  race(rows, [&](const Step& step) { step.launch(M, N, K, 1.0f, dA.data(), dB.data(), 0.0f, C.data()); }, rounds,
       runs);
  const double flops = 2.0 * M * N * K;
  const auto tflops = [&](const Row& row) { return flops / (row.median_ms() * 1e9); };
  std::printf("### SGEMM fp32, M = %d, N = %d, K = %d: %.1f GFLOP per run, %d rounds\n\n", M, N, K, flops / 1e9,
              rounds);
  lab::Ladder table({"Step", "Time", "TFLOP/s", "% of cuBLAS", "rounds: lowest-highest", "runs"});
  const Row* fastest = nullptr;  // the fastest of step 8's configurations (none: step 8 did not run)
  const Row* prefetched = nullptr;  // 8f (--register-prefetch)
  double best_tflops = 0.0, best_pct = 0.0;
  for (const Row& row : rows) {
    const std::string name = row.step->name;
    const tc::Spread spread = tc::spread(row.round_pct);
    std::vector<std::string> cells = {name, tutorial::format_time(row.median_ms()),
                                      tutorial::format("%.2f", tflops(row)),
                                      &row == &rows[0] ? "100.0%" : tutorial::format("%.1f%%", row.pct()),
                                      &row == &rows[0] ? "" : tutorial::format("%.1f-%.1f%%", spread.low, spread.high),
                                      tutorial::format("%d x %d", rounds, row.runs)};
    if (&row - &rows[0] < std::ptrdiff_t(kLibraries)) {  // cuBLAS: the limit
      if (&row != &rows[0])
        verifier.figure(tutorial::format("cublas_sgemm_%s_pct_of_best", &row == &rows[1] ? "pedantic" : "default"),
                        std::round(10 * row.pct()) / 10);
      table.add_limit(cells);
      continue;
    }
    // Keys by step number: step1_pct_of_cublas ... step8d_pct_of_cublas.
    const std::string key = "step" + lab::step_number(name);
    verifier.figure(key + "_pct_of_cublas", std::round(10 * row.pct()) / 10);
    verifier.figure(key + "_pct_low", std::round(10 * spread.low) / 10);
    verifier.figure(key + "_pct_high", std::round(10 * spread.high) / 10);
    if (tflops(row) > best_tflops) {
      best_tflops = tflops(row);
      best_pct = row.pct();
    }
    if (row.step->tiles && (!fastest || row.median_ms() < fastest->median_ms())) fastest = &row;
    if (key == "step8f") prefetched = &row;
    table.add_step(row.median_ms(), cells, verifier);
  }
  table.print();
  std::printf("\n");
  verifier.goal("best step's share of cuBLAS's best fp32", best_pct, 80, "%");
  verifier.figure("cublas_tflops", std::round(tflops(rows[0]) * 10) / 10);
  verifier.figure("cublas_best_candidate", best.chosen_index());
  verifier.figure("best_tflops", std::round(best_tflops * 10) / 10);
  verifier.figure("best_pct_of_cublas", std::round(10 * best_pct) / 10);
  if (!fastest) return verifier.finish("07_sgemm");

  // Step 8's result is its fastest configuration: the sweep is the tuning, measured here.
  const tc::Spread spread = tc::spread(fastest->round_pct);
  std::printf("Step 8, fastest tile configuration: %s, %.2f TFLOP/s (%.1f%% of cuBLAS's best; rounds %.1f-%.1f%%).\n",
              fastest->step->tiles->label.c_str(), tflops(*fastest), fastest->pct(), spread.low, spread.high);
  verifier.goal("step 8 (fastest tile configuration) vs cuBLAS's best fp32", std::round(10 * fastest->pct()) / 10,
                95, "%");
  verifier.goal("step 8 (fastest tile configuration) vs cuBLAS's best fp32, moonshot",
                std::round(10 * fastest->pct()) / 10, 100, "%");
  if (prefetched)
    verifier.goal("8f (8d, fragments prefetched in registers; Going deeper) vs cuBLAS's best fp32",
                  std::round(10 * prefetched->pct()) / 10, 95, "%");
  std::printf("\n### Step 8's tile configurations, as compiled for this GPU\n\n");
  tutorial::Table tiles(sgemm::tile_columns());
  for (const Step* step : steps)
    if (step->tiles) tiles.add_row(step->tiles->row(step->tiles->label));
  tiles.print();
  return verifier.finish("07_sgemm");
}
