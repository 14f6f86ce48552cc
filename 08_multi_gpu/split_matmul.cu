// Chapter 08, part 4: one BF16 matmul C = A B split over every GPU, with cuBLAS.
//
// The setting is a layer of a model: A (M x K, the activations) is on every GPU, the weights B
// (K x N) were split by columns once, when the model was loaded, and every GPU wants all of C
// for the next layer. GPU g computes the columns of C that its part of B gives, then sends
// them to every other GPU. First all compute, then all communication; then the same in
// chunks, each chunk sent while the next is computed. Matrices are column-major (cuBLAS's
// order), so a block of columns is one contiguous piece of memory.
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <tutorial/cli.hpp>
#include <tutorial/cublas.cuh>
#include <tutorial/timer.cuh>

#include "multi_gpu.cuh"
#include "partition.hpp"

namespace {

using bf16 = __nv_bfloat16;

using Columns = partition::Range;  // columns [first, first + count)
Columns part_of(size_t n, int parts, int which) { return partition::even(n, parts, which); }

/// One GPU's share: the whole A, its block of B's columns, a whole C, two streams, cuBLAS.
struct Gpu {
  int id;
  Columns cols;
  multi_gpu::GpuArray<bf16> a, b, c;
  cudaStream_t compute = nullptr, copy = nullptr;
  cudaEvent_t go = nullptr, done = nullptr;
  std::vector<cudaEvent_t> chunk_ready;
  cublasHandle_t blas = nullptr;
};

void gemm(Gpu& g, size_t m, size_t k, Columns cols, cudaStream_t stream) {
  // C[:, cols] = A * B[:, cols]: B's columns of this GPU start at column 0 of g.b.
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasSetStream(g.blas, stream));
  CUBLAS_CHECK(cublasGemmEx(g.blas, CUBLAS_OP_N, CUBLAS_OP_N, int(m), int(cols.count), int(k), &one,
                            g.a.data(), CUDA_R_16BF, int(m), g.b.data() + (cols.first - g.cols.first) * k,
                            CUDA_R_16BF, int(k), &zero, g.c.data() + cols.first * m, CUDA_R_16BF, int(m),
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/// A record of when each piece of work ran, for the timeline figure.
struct Span {
  int gpu;
  const char* lane;
  std::string what;
  cudaEvent_t start, stop;  // timed from origin[gpu], recorded as that GPU starts the split
};

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("08_split_matmul", "A BF16 matmul (cuBLAS) split by columns over every GPU, without "
                                       "and with the communication hidden behind the compute.");
  cli.add_int("m", "rows of A and C", 8192, 1, 16384);
  cli.add_int("n", "columns of B and C", 8192, 2, 16384);
  cli.add_int("k", "columns of A, rows of B (at most 8192: the exact check's sums stay within bf16's whole numbers)", 8192, 1, 8192);
  cli.add_int("chunks", "pieces of each GPU's columns in the overlapped version", 8, 1, 64);
  cli.add_int("runs", "timed runs (the median is reported)", 10, 1, 1000);
  cli.add_string("timeline", "write each piece's start and end (ms) here, as CSV", "");
  cli.add_flag("check-only", "verify, time nothing");
  cli.parse_or_exit(argc, argv);
  const size_t m = cli.get_int("m"), n = cli.get_int("n"), k = cli.get_int("k");
  const int chunks = int(cli.get_int("chunks"));

  multi_gpu::force_nvls_off();
  const int gpus = multi_gpu::require_gpus();
  if (n < size_t(gpus) * chunks) {
    std::fputs(cli.error_line(tutorial::format("--n must be at least %d (GPUs x chunks)", gpus * chunks)).c_str(), stderr);
    return tutorial::kExitUsage;
  }
  tutorial::Verifier verifier;
  multi_gpu::enable_all_peers(gpus, &verifier);

  // [excerpt:bytes]
  // Bytes each GPU receives per matmul, for the three ways to split it (BF16 = 2 bytes):
  const double share = double(gpus - 1) / gpus;
  const double by_columns = share * m * n * 2;  // all-gather of C's columns; B split, no copy
  const double by_rows = share * m * n * 2;     // all-gather of C's rows, but every GPU holds all of B
  const double by_k = 2 * share * m * n * 4;    // all-reduce of a whole fp32 partial C per GPU
  // [/excerpt:bytes]
  std::printf("\nBytes each GPU receives per matmul: split by columns of B %.0f MiB; by rows of A %.0f MiB "
              "(and %zu MiB more weights on every GPU); by K %.0f MiB (an all-reduce of fp32 partial sums).\n",
              by_columns / 1048576, by_rows / 1048576, k * n * 2 * (gpus - 1) / gpus >> 20, by_k / 1048576);

  // Inputs: small whole numbers, with few non-zeros per row of A, so every sum is a whole
  // number of magnitude <= 256 (exact in BF16 and fp32), whatever order cuBLAS adds in.
  auto a_exact = [](size_t i, size_t kk) { return (i + kk) % 64 == 0 ? float(int((i / 64 + kk) % 3) - 1) : 0.0f; };
  auto b_exact = [](size_t kk, size_t j) { return float(int((kk * 3 + j * 7) % 5) - 2); };
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<bf16> host_a(m * k), host_b(k * n);

  std::vector<Gpu> g(gpus);
  for (int d = 0; d < gpus; ++d) {
    g[d].id = d;
    g[d].cols = part_of(n, gpus, d);
    // GPU 0 holds all of B, for the one-GPU run it is compared with.
    g[d].a = multi_gpu::GpuArray<bf16>(d, m * k);
    g[d].b = multi_gpu::GpuArray<bf16>(d, k * (d == 0 ? n : g[d].cols.count));
    g[d].c = multi_gpu::GpuArray<bf16>(d, m * n);
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaStreamCreateWithFlags(&g[d].compute, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&g[d].copy, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&g[d].go, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&g[d].done, cudaEventDisableTiming));
    g[d].chunk_ready.resize(chunks);
    for (cudaEvent_t& e : g[d].chunk_ready) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CUBLAS_CHECK(cublasCreate(&g[d].blas));
  }
  auto upload = [&](bool exact) {
    for (size_t j = 0; j < k; ++j)
      for (size_t i = 0; i < m; ++i) host_a[i + j * m] = __float2bfloat16(exact ? a_exact(i, j) : uniform(rng));
    for (size_t j = 0; j < n; ++j)
      for (size_t i = 0; i < k; ++i) host_b[i + j * k] = __float2bfloat16(exact ? b_exact(i, j) : uniform(rng));
    for (Gpu& gpu : g) {
      gpu.a.upload(host_a);
      const size_t first = gpu.id == 0 ? 0 : gpu.cols.first;
      CUDA_CHECK(cudaMemcpy(gpu.b.data(), host_b.data() + first * k, gpu.b.bytes(), cudaMemcpyHostToDevice));
    }
    multi_gpu::synchronize_all(gpus);  // the streams are non-blocking: they would not wait
  };

  std::vector<Span> spans;  // filled only when asked to
  auto span = [&](Gpu& gpu, cudaStream_t stream, const char* lane, std::string what, bool start) {
    if (start) {
      spans.push_back({gpu.id, lane, std::move(what), nullptr, nullptr});
      CUDA_CHECK(cudaEventCreate(&spans.back().start));
      CUDA_CHECK(cudaEventCreate(&spans.back().stop));
      CUDA_CHECK(cudaEventRecord(spans.back().start, stream));
    } else {
      for (auto it = spans.rbegin(); it != spans.rend(); ++it)
        if (it->gpu == gpu.id && std::string(it->lane) == lane) {
          CUDA_CHECK(cudaEventRecord(it->stop, stream));
          break;
        }
    }
  };
  bool record = false;
  std::vector<cudaEvent_t> origin(gpus);

  auto one_gpu = [&] {
    CUDA_CHECK(cudaSetDevice(0));
    gemm(g[0], m, k, {0, n}, g[0].compute);
  };
  // [excerpt:split]
  // Every GPU: C[:, its columns] in `pieces` GEMMs on its compute stream; each piece, once
  // computed, is copied to every peer on the GPU's copy stream while the next is computed.
  // With pieces = 1 nothing overlaps: the copies wait for the whole GEMM.
  auto split = [&](int pieces) {
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaEventRecord(g[0].go, g[0].compute));  // everyone starts when GPU 0 does
    for (Gpu& gpu : g) {
      CUDA_CHECK(cudaSetDevice(gpu.id));
      CUDA_CHECK(cudaStreamWaitEvent(gpu.compute, g[0].go, 0));
      if (record) CUDA_CHECK(cudaEventRecord(origin[gpu.id], gpu.compute));
      for (int p = 0; p < pieces; ++p) {
        const Columns part = part_of(gpu.cols.count, pieces, p);
        const Columns cols{gpu.cols.first + part.first, part.count};
        if (record) span(gpu, gpu.compute, "compute", tutorial::format("GEMM %d", p), true);
        // [excerpt:piece]
        gemm(gpu, m, k, cols, gpu.compute);
        if (record) span(gpu, gpu.compute, "compute", "", false);
        CUDA_CHECK(cudaEventRecord(gpu.chunk_ready[p], gpu.compute));
        CUDA_CHECK(cudaStreamWaitEvent(gpu.copy, gpu.chunk_ready[p], 0));
        if (record) span(gpu, gpu.copy, "copy", tutorial::format("send %d", p), true);
        for (const Gpu& peer : g)
          if (peer.id != gpu.id)
            CUDA_CHECK(cudaMemcpyPeerAsync(peer.c.data() + cols.first * m, peer.id, gpu.c.data() + cols.first * m,
                                           gpu.id, cols.count * m * sizeof(bf16), gpu.copy));
        // [/excerpt:piece]
        if (record) span(gpu, gpu.copy, "copy", "", false);
      }
      CUDA_CHECK(cudaEventRecord(gpu.done, gpu.copy));
    }
    CUDA_CHECK(cudaSetDevice(0));
    for (const Gpu& gpu : g) CUDA_CHECK(cudaStreamWaitEvent(g[0].compute, gpu.done, 0));  // all sent
  };
  // [/excerpt:split]

  // --- Verification: exact inputs, then random ones.
  upload(true);
  for (Gpu& gpu : g) gpu.c.poison();
  one_gpu();
  multi_gpu::synchronize_all(gpus);
  const std::vector<bf16> reference = g[0].c.download();
  {  // One GPU against the CPU's exact sums, at every row of 64 sampled columns.
    double worst = 0;
    for (size_t s = 0; s < 64; ++s) {
      const size_t j = (s * 2654435761u) % n;
      for (size_t i = 0; i < m; ++i) {
        double sum = 0;
        for (size_t kk = (64 - i % 64) % 64; kk < k; kk += 64) sum += double(a_exact(i, kk)) * b_exact(kk, j);
        const double e = std::fabs(double(__bfloat162float(reference[i + j * m])) - sum);
        worst = std::isnan(e) ? NAN : std::max(worst, e);
      }
    }
    verifier.exact(tutorial::format("one GPU, %zu x %zu x %zu, 64 columns against the CPU", m, n, k), worst);
  }
  for (int pieces : {1, chunks}) {  // every element on every GPU equals the one-GPU result
    for (Gpu& gpu : g) gpu.c.poison();
    split(pieces);
    multi_gpu::synchronize_all(gpus);
    double worst = 0;
    for (Gpu& gpu : g) {
      const std::vector<bf16> got = gpu.c.download();
      for (size_t i = 0; i < m * n; ++i) {
        const double e = std::fabs(double(__bfloat162float(got[i])) - __bfloat162float(reference[i]));
        worst = std::isnan(e) ? NAN : std::max(worst, e);
      }
    }
    verifier.exact(tutorial::format("split over %d GPUs in %d piece%s: all of C on every GPU, against one GPU",
                                    gpus, pieces, pieces > 1 ? "s" : ""), worst);
  }
  {  // Random inputs: sampled elements against a float64 product of the same BF16 inputs.
    upload(false);
    for (Gpu& gpu : g) gpu.c.poison();
    split(chunks);
    multi_gpu::synchronize_all(gpus);
    const std::vector<bf16> got = g[gpus - 1].c.download();
    std::vector<double> want, have;
    for (size_t s = 0; s < 4096; ++s) {
      const size_t i = (s * 40503u) % m, j = (s * 2654435761u) % n;
      double sum = 0;
      for (size_t kk = 0; kk < k; ++kk)
        sum += double(__bfloat162float(host_a[i + kk * m])) * __bfloat162float(host_b[kk + j * k]);
      want.push_back(sum);
      have.push_back(__bfloat162float(got[i + j * m]));
    }
    // BF16 keeps 8 significant bits: rounding C alone costs up to 2^-9 of each element.
    verifier.within("split, random BF16 inputs, 4096 elements of C on the last GPU vs float64",
                    tutorial::relative_error(have.data(), want.data(), want.size()), 1e-2);
  }

  if (!cli.get_flag("check-only")) {
    const tutorial::TimingPlan plan{3, int(cli.get_int("runs"))};
    const double flops = 2.0 * m * n * k;
    auto time_on_gpu0 = [&](auto&& work) { return tutorial::time_gpu(work, plan, g[0].compute).median_ms; };
    // Interleaved: the three versions take turns, three rounds, the median of each.
    std::vector<double> t_one, t_plain, t_overlap;
    for (int round = 0; round < 3; ++round) {
      t_one.push_back(time_on_gpu0(one_gpu));
      t_plain.push_back(time_on_gpu0([&] { split(1); }));
      t_overlap.push_back(time_on_gpu0([&] { split(chunks); }));
    }
    const double one = tutorial::summarize(t_one).median_ms, plain = tutorial::summarize(t_plain).median_ms,
                 overlap = tutorial::summarize(t_overlap).median_ms;
    std::printf("\n### C = A B, BF16 in, fp32 accumulate, %zu x %zu x %zu, %d GPUs\n\n", m, n, k, gpus);
    tutorial::Table table({"Version", "Time", "TFLOP/s", "Speed-up over one GPU"});
    table.add_row({"one GPU (cuBLAS)", tutorial::format_time(one), tutorial::format("%.0f", flops / one / 1e9), "1.00x"});
    table.add_row({tutorial::format("%d GPUs, compute then send", gpus), tutorial::format_time(plain),
                   tutorial::format("%.0f", flops / plain / 1e9), tutorial::format("%.2fx", one / plain)});
    table.add_row({tutorial::format("%d GPUs, %d pieces, send while computing", gpus, chunks), tutorial::format_time(overlap),
                   tutorial::format("%.0f", flops / overlap / 1e9), tutorial::format("%.2fx", one / overlap)});
    table.print();
    std::printf("\n");
    verifier.figure("gpus", gpus);
    verifier.figure("one_gpu_tflops", std::round(flops / one / 1e9));
    verifier.figure("speedup_no_overlap", std::round(100 * one / plain) / 100);
    verifier.figure("speedup_overlap", std::round(100 * one / overlap) / 100);
    verifier.goal(tutorial::format("speed-up over one GPU on %d GPUs, with overlap", gpus), one / overlap, 0.9 * gpus, "x");
  }

  // --- The timeline: one more run of each split version, with an event around every piece.
  if (!cli.get_string("timeline").empty()) {
    std::ofstream csv(cli.get_string("timeline"));
    csv << "version,gpu,lane,what,start_ms,end_ms\n";
    for (int pieces : {1, chunks}) {
      record = true;
      for (int d = 0; d < gpus; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaEventCreate(&origin[d]));
      }
      split(pieces);
      multi_gpu::synchronize_all(gpus);
      for (const Span& s : spans) {
        float start = 0, stop = 0;
        CUDA_CHECK(cudaEventElapsedTime(&start, origin[s.gpu], s.start));
        CUDA_CHECK(cudaEventElapsedTime(&stop, origin[s.gpu], s.stop));
        csv << (pieces == 1 ? "compute then send" : "send while computing") << ',' << s.gpu << ',' << s.lane
            << ',' << s.what << ',' << start << ',' << stop << '\n';
        CUDA_CHECK(cudaEventDestroy(s.start));
        CUDA_CHECK(cudaEventDestroy(s.stop));
      }
      spans.clear();
      for (int d = 0; d < gpus; ++d) CUDA_CHECK(cudaEventDestroy(origin[d]));
      record = false;
    }
    std::printf("Timeline written to %s\n", cli.get_string("timeline").c_str());
  }

  for (Gpu& gpu : g) {
    CUDA_CHECK(cudaSetDevice(gpu.id));
    CUBLAS_CHECK(cublasDestroy(gpu.blas));
    for (cudaEvent_t e : gpu.chunk_ready) CUDA_CHECK(cudaEventDestroy(e));
    CUDA_CHECK(cudaEventDestroy(gpu.go));
    CUDA_CHECK(cudaEventDestroy(gpu.done));
    CUDA_CHECK(cudaStreamDestroy(gpu.compute));
    CUDA_CHECK(cudaStreamDestroy(gpu.copy));
  }
  return verifier.finish("08_split_matmul");
}
