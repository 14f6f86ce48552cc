// Chapter 08, part 3: an all-reduce of our own over peer memory, against NCCL at every size.
//
// Every GPU holds n floats of small whole numbers; afterwards each holds the sum of all of
// them, which is exact, so every algorithm at every size is checked for `Max error: 0` on
// every GPU (outputs poisoned first). Then each size is timed three ways (NCCL, one-shot,
// two-stage) in interleaved batches, and the size-picked version is compared with NCCL.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <tutorial/cli.hpp>

#include "allreduce.cuh"
#include "batch_timer.cuh"
#include "nccl_check.hpp"

namespace {

std::string size_label(size_t bytes) {
  if (bytes >= (1u << 30) && bytes % (1u << 30) == 0) return tutorial::format("%zuGiB", bytes >> 30);
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return tutorial::format("%zuMiB", bytes >> 20);
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return tutorial::format("%zuKiB", bytes >> 10);
  return tutorial::format("%zuB", bytes);
}

double median(std::vector<double> v) { return tutorial::summarize(std::move(v)).median_ms; }

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("08_allreduce", "Our own all-reduce over peer memory (one-shot and two-stage) "
                                    "against NCCL, verified exactly and timed at every size.");
  cli.add_int("min-bytes", "smallest message, bytes (sizes go up by 4x)", 4 << 10, 4, 1LL << 32);
  cli.add_int("max-bytes", "largest message, bytes", 1LL << 30, 4, 1LL << 32);
  cli.add_int("n", "one message of exactly this many floats instead (e.g. an odd count)", 0, 0, 1LL << 30);
  cli.add_int("runs", "timed runs per batch", 20, 1, 1000);
  cli.add_int("rounds", "batches per method and size, interleaved", 3, 1, 100);
  cli.add_flag("check-only", "verify every size, time nothing");
  cli.add_flag("no-nccl", "our kernels only (for compute-sanitizer)");
  cli.add_flag("test-timeout", "launch on GPU 0 alone: its wait must time out and say so");
  cli.parse_or_exit(argc, argv);
  if (cli.get_int("min-bytes") > cli.get_int("max-bytes")) {
    std::fputs(cli.error_line("--min-bytes must not exceed --max-bytes").c_str(), stderr);
    return tutorial::kExitUsage;
  }
  std::vector<size_t> counts;  // floats per message
  if (cli.get_int("n") > 0) counts.push_back(size_t(cli.get_int("n")));
  else
    for (long long b = cli.get_int("min-bytes"); b <= cli.get_int("max-bytes"); b *= 4) counts.push_back(size_t(b) / 4);
  const bool nccl = !cli.get_flag("no-nccl");

  multi_gpu::force_nvls_off();
  const int gpus = multi_gpu::require_gpus();
  tutorial::Verifier verifier;
  multi_gpu::enable_all_peers(gpus, &verifier);
  std::vector<cudaStream_t> streams = multi_gpu::make_streams(gpus);

  if (cli.get_flag("test-timeout")) {
    allreduce::PeerAllReduce lonely(gpus, 200'000'000ull);  // 0.2 s
    multi_gpu::GpuArray<float> in(0, 1024), out(0, 1024);
    std::vector<float*> ins(gpus, in.data()), outs(gpus, out.data());
    lonely.run(allreduce::Algorithm::kOneShot, ins, outs, 1024, streams, 1);  // GPU 0 only
    multi_gpu::synchronize_all(gpus);
    const bool reported = !lonely.report_timeout();
    verifier.expect("GPU 0 alone: its wait timed out and named GPU 0, the start barrier and a missing peer",
                    reported && lonely.timeout(0).gpu == 0 && lonely.timeout(0).step == allreduce::kStart &&
                        lonely.timeout(0).peer != 0);
    return verifier.finish("08_allreduce");
  }

  const size_t max_n = *std::max_element(counts.begin(), counts.end());
  tutorial::require_device_memory(3 * max_n * sizeof(float), "Three buffers of the largest message");
  std::vector<multi_gpu::GpuArray<float>> in, out;
  std::vector<float*> ins, outs;
  for (int d = 0; d < gpus; ++d) {
    std::vector<float> host(max_n);
    for (size_t i = 0; i < max_n; ++i) host[i] = multi_gpu::exact_input(d, i);
    in.emplace_back(d, max_n);
    in.back().upload(host);
    out.emplace_back(d, max_n);
    ins.push_back(in.back().data());
    outs.push_back(out.back().data());
  }
  std::vector<float> expected(max_n, 0.0f);
  for (int d = 0; d < gpus; ++d)
    for (size_t i = 0; i < max_n; ++i) expected[i] += multi_gpu::exact_input(d, i);

  allreduce::PeerAllReduce mine(gpus);
  std::vector<ncclComm_t> comms(gpus);
  if (nccl) {
    multi_gpu::require_matching_nccl();
    NCCL_CHECK(ncclCommInitAll(comms.data(), gpus, nullptr));  // devices 0 .. gpus-1
  }
  // [excerpt:nccl-call]
  auto run_nccl = [&](size_t n) {
    NCCL_CHECK(ncclGroupStart());  // one thread, many GPUs: queue all, then launch together
    for (int d = 0; d < gpus; ++d)
      NCCL_CHECK(ncclAllReduce(ins[d], outs[d], n, ncclFloat, ncclSum, comms[d], streams[d]));
    NCCL_CHECK(ncclGroupEnd());
  };
  // [/excerpt:nccl-call]
  struct Method {
    const char* name;
    std::function<void(size_t)> run;
    size_t max_n;  // the largest message it takes
  };
  std::vector<Method> methods = {
      {"one-shot", [&](size_t n) { mine.run(allreduce::Algorithm::kOneShot, ins, outs, n, streams); },
       allreduce::kOneShotMaxFloats},
      {"two-stage", [&](size_t n) { mine.run(allreduce::Algorithm::kTwoStage, ins, outs, n, streams); }, SIZE_MAX}};
  if (nccl) methods.insert(methods.begin(), Method{"NCCL", run_nccl, SIZE_MAX});

  auto finish_and_check = [&] {
    multi_gpu::synchronize_all(gpus);
    if (!mine.report_timeout()) std::exit(tutorial::kExitFailure);
    if (nccl)
      for (ncclComm_t comm : comms) NCCL_CHECK_ASYNC(comm);
  };

  // Exact answers, every method, every size, every GPU.
  for (size_t n : counts)
    for (const Method& m : methods) {
      if (n > m.max_n) continue;
      for (auto& o : out) o.poison();
      m.run(n);
      finish_and_check();
      double worst = 0;
      for (int d = 0; d < gpus; ++d) {
        std::vector<float> got(n);
        CUDA_CHECK(cudaMemcpy(got.data(), outs[d], n * sizeof(float), cudaMemcpyDeviceToHost));
        const double e = tutorial::max_abs_error(got.data(), expected.data(), n);
        worst = std::isnan(e) || std::isnan(worst) ? NAN : std::max(worst, e);
      }
      verifier.exact(tutorial::format("%s, %s (n = %zu), all %d GPUs", m.name, size_label(n * 4).c_str(), n, gpus), worst);
    }
  {  // Random inputs against a float64 sum, at an odd count.
    const size_t n = std::min<size_t>(max_n, 100003);
    std::mt19937 rng(8);
    std::uniform_real_distribution<float> uniform(-1, 1);
    std::vector<std::vector<float>> host(gpus, std::vector<float>(n));
    std::vector<double> reference(n, 0.0);
    for (int d = 0; d < gpus; ++d) {
      for (size_t i = 0; i < n; ++i) reference[i] += host[d][i] = uniform(rng);
      CUDA_CHECK(cudaMemcpy(ins[d], host[d].data(), n * sizeof(float), cudaMemcpyHostToDevice));
    }
    multi_gpu::synchronize_all(gpus);  // the streams are non-blocking: they would not wait
    for (const Method& m : methods) {
      for (auto& o : out) o.poison();
      m.run(n);
      finish_and_check();
      std::vector<float> got(n);
      CUDA_CHECK(cudaMemcpy(got.data(), outs[gpus - 1], n * sizeof(float), cudaMemcpyDeviceToHost));
      verifier.within(tutorial::format("%s, random floats, n = %zu, against a float64 sum", m.name, n),
                      tutorial::relative_error(got.data(), reference.data(), n), 1e-6);
    }
  }

  if (!cli.get_flag("check-only") && nccl) {
    multi_gpu::BatchTimer timer(streams);
    const double bus_factor = 2.0 * (gpus - 1) / gpus;
    std::printf("\n### All-reduce of fp32 on %d GPUs (median of %lld x %lld runs each, interleaved)\n\n"
                "Bus bandwidth = size / time x 2(n-1)/n = %.2f: the bytes each GPU's links carry.\n\n",
                gpus, cli.get_int("rounds"), cli.get_int("runs"), bus_factor);
    tutorial::Table table({"Size", "NCCL", "NCCL bus GB/s", "one-shot", "two-stage", "picked",
                           "picked vs NCCL", "picked bus GB/s"});
    double small_worst = INFINITY, large_worst = INFINITY, picked_worst = INFINITY;
    for (size_t n : counts) {
      const size_t bytes = n * sizeof(float);
      std::vector<std::vector<double>> samples(methods.size());
      for (long long r = 0; r < cli.get_int("rounds"); ++r)
        for (size_t k = 0; k < methods.size(); ++k) {
          const size_t which = (k + r) % methods.size();  // rotate who goes first
          if (n > methods[which].max_n) continue;
          const std::vector<double> t = timer.time([&] { methods[which].run(n); }, int(cli.get_int("runs")));
          samples[which].insert(samples[which].end(), t.begin(), t.end());
        }
      finish_and_check();
      const double t_nccl = median(samples[0]), t_two = median(samples[2]);
      const double t_one = samples[1].empty() ? NAN : median(samples[1]);
      const bool one = allreduce::pick(bytes) == allreduce::Algorithm::kOneShot;
      const double t_pick = one ? t_one : t_two;
      auto busbw = [&](double ms) { return bytes / (ms * 1e6) * bus_factor; };
      table.add_row({size_label(bytes), tutorial::format_time(t_nccl), tutorial::format("%.1f", busbw(t_nccl)),
                     std::isnan(t_one) ? "-" : tutorial::format_time(t_one), tutorial::format_time(t_two), one ? "one-shot" : "two-stage",
                     tutorial::format("%.2fx", t_nccl / t_pick), tutorial::format("%.1f", busbw(t_pick))});
      const std::string label = size_label(bytes);
      verifier.figure("nccl_us_" + label, std::round(t_nccl * 1e4) / 10);
      verifier.figure("mine_us_" + label, std::round(t_pick * 1e4) / 10);
      verifier.figure("nccl_busbw_" + label, std::round(busbw(t_nccl) * 10) / 10);
      verifier.figure("mine_busbw_" + label, std::round(busbw(t_pick) * 10) / 10);
      if (bytes <= (256u << 10)) small_worst = std::min(small_worst, t_nccl / t_one);
      if (bytes == (256u << 20) || bytes == (1u << 30)) large_worst = std::min(large_worst, t_nccl / t_two);
      picked_worst = std::min(picked_worst, t_nccl / t_pick);
    }
    table.print();
    std::printf("\n");
    verifier.figure("gpus", gpus);
    verifier.figure("picked_pct_of_nccl_worst", std::round(1000 * picked_worst) / 10);
    if (std::isfinite(small_worst)) verifier.figure("one_shot_speedup_worst_small", std::round(100 * small_worst) / 100);
    if (std::isfinite(large_worst)) verifier.figure("two_stage_pct_of_nccl_busbw_large", std::round(1000 * large_worst) / 10);
    if (std::isfinite(small_worst))
      verifier.goal("one-shot's speed-up over NCCL, worst size up to 256 KiB", small_worst, 1.5, "x");
    if (std::isfinite(large_worst))
      verifier.goal("two-stage's share of NCCL's bus bandwidth, worst of 256 MiB and 1 GiB", 100 * large_worst, 90, "%");
    verifier.goal("size-picked all-reduce's speed as a share of NCCL's, worst size", 100 * picked_worst, 95.2, "%");
  }
  if (nccl)
    for (ncclComm_t comm : comms) NCCL_CHECK(ncclCommDestroy(comm));
  return verifier.finish("08_allreduce");
}
