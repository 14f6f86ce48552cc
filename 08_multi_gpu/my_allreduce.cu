// Chapter 08, part 3: an all-reduce of our own over peer memory, against NCCL at every size.
//
// Every GPU holds n floats of small whole numbers, made on the GPU; afterwards each holds the sum
// of all of them, which is exact, so every method at every size is checked on the GPU for
// `Max error: 0` on every GPU (outputs poisoned first). Then each size is timed two ways:
//  - eager: calls launched one by one from this thread (behind a gate, so the GPUs never wait for
//    the host between calls): what a program that launches each call pays;
//  - in a CUDA graph: 100 calls captured once and replayed, so the launches cost the host almost
//    nothing: what the GPUs themselves take.
// Beside them, an empty kernel in the same two ways (the launch floor), NCCL with its buffers
// registered (ncclCommRegister), and the copy engine both ways at once (the large-message bar).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <tutorial/cli.hpp>

#include "allreduce.cuh"
#include "allreduce_check.cuh"
#include "batch_timer.cuh"
#include "nccl_check.hpp"

namespace {

using allreduce::Algorithm;

double median(std::vector<double> v) { return tutorial::summarize(std::move(v)).median_ms; }
/// Half the distance between the 25th and 75th percentiles, as a share of the median.
double spread_pct(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double q1 = v[v.size() / 4], q3 = v[(3 * v.size()) / 4];
  return 100 * (q3 - q1) / 2 / median(v);
}
double round1(double x) { return std::round(x * 10) / 10; }

__global__ void empty_kernel() {}

/// One way to all-reduce n floats on every GPU (or, for the floor, to launch an empty kernel).
struct Method {
  std::string name;
  std::function<void(size_t)> run;
  std::vector<float*> in, out;  // the buffers it reads and writes
  size_t max_n;     // the largest message it takes
  bool graph;       // timed in a CUDA graph too
  size_t min_n = 0;  // the smallest it is timed at
};

/// K calls of a method captured into one graph per GPU (NCCL's tests capture the same way), for
/// replays. cudaGraphInstantiateWithFlags has one signature from CUDA 11.4 on.
class Graphs {
 public:
  Graphs(const std::vector<cudaStream_t>& streams, const std::function<void()>& calls) : streams_(streams) {
    const int gpus = int(streams.size());
    for (int d = 0; d < gpus; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaStreamBeginCapture(streams[d], cudaStreamCaptureModeThreadLocal));
    }
    calls();
    std::vector<cudaGraph_t> graphs(gpus);
    for (int d = 0; d < gpus; ++d) {  // every capture ends before any instantiation: while one
      CUDA_CHECK(cudaSetDevice(d));   // stream of this thread captures, instantiating is refused
      CUDA_CHECK(cudaStreamEndCapture(streams[d], &graphs[d]));
    }
    execs_.resize(gpus);
    for (int d = 0; d < gpus; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaGraphInstantiateWithFlags(&execs_[d], graphs[d], 0));
      CUDA_CHECK(cudaGraphDestroy(graphs[d]));
    }
  }
  ~Graphs() {
    for (cudaGraphExec_t e : execs_) cudaGraphExecDestroy(e);
  }
  Graphs(const Graphs&) = delete;
  Graphs& operator=(const Graphs&) = delete;
  void replay() const {
    for (size_t d = 0; d < execs_.size(); ++d) {
      CUDA_CHECK(cudaSetDevice(int(d)));
      CUDA_CHECK(cudaGraphLaunch(execs_[d], streams_[d]));
    }
  }

 private:
  std::vector<cudaStream_t> streams_;
  std::vector<cudaGraphExec_t> execs_;
};

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("08_allreduce", "Our own all-reduce over peer memory (one-shot LL, one-shot, two-stage) "
                                    "against NCCL, verified exactly and timed at every size, eager and in CUDA graphs.");
  multi_gpu::add_message_size_options(cli);
  cli.add_int("runs", "timed runs per batch", 20, 1, 1000);
  cli.add_int("rounds", "batches per method and size, interleaved", 3, 1, 100);
  cli.add_int("graph-calls", "calls captured per CUDA graph", 100, 1, 1000);
  cli.add_int("graph-max-bytes", "largest message timed in CUDA graphs (graphs matter for small ones)", 4 << 20, 4,
              1LL << 32);
  cli.add_int("max-blocks", "at most this many blocks per call of ours (0: one per SM)", 0, 0, 1024);
  cli.add_flag("check-only", "verify every size, time nothing");
  cli.add_flag("no-nccl", "our kernels only (for compute-sanitizer)");
  cli.add_flag("nccl-only", "NCCL only, timed in CUDA graphs at every size (for the NCCL_ALGO/PROTO sweep)");
  cli.add_flag("test-timeout", "launch on GPU 0 alone: its wait must time out and say so");
  cli.add_flag("call-again", "with --test-timeout: call again after the timeout, which must be refused");
  cli.add_int("test-stall-gpu", "test: stall this GPU's stream (past the deadline) in the middle of the timed run; "
              "the watchdog must name it and end the program", -1, -1, 7);
  multi_gpu::add_deadline_option(cli);
  cli.parse_or_exit(argc, argv);
  const std::vector<size_t> counts = multi_gpu::message_counts(cli);  // floats per message
  if (cli.get_flag("nccl-only") && cli.get_flag("no-nccl")) {
    std::fputs(cli.error_line("--nccl-only and --no-nccl exclude each other").c_str(), stderr);
    return tutorial::kExitUsage;
  }
  const bool nccl = !cli.get_flag("no-nccl"), ours = !cli.get_flag("nccl-only");

  multi_gpu::force_nvls_off();
  const int gpus = multi_gpu::require_gpus();
  // [excerpt:watchdog]
  // Every wait under one deadline: past it, the watchdog names the GPU that did not arrive, aborts
  // NCCL and ends the program (exit 1). Our kernels give up sooner, at half the deadline.
  const long long deadline_ms = cli.get_int("deadline-ms");
  multi_gpu::Watchdog watchdog(deadline_ms, "08_allreduce");
  const unsigned long long kernel_timeout_ns = deadline_ms * 500'000ull;
  // [/excerpt:watchdog]
  if (cli.get_int("test-stall-gpu") >= gpus) {
    std::fputs(cli.error_line(tutorial::format("--test-stall-gpu must name one of the %d GPUs", gpus)).c_str(), stderr);
    return tutorial::kExitUsage;
  }
  tutorial::Verifier verifier;
  multi_gpu::enable_all_peers(gpus, &verifier);
  std::vector<cudaStream_t> streams = multi_gpu::make_streams(gpus);
  multi_gpu::Arrivals arrivals(gpus);

  if (cli.get_flag("test-timeout")) {
    allreduce::PeerAllReduce lonely(gpus, 200'000'000ull);  // 0.2 s
    multi_gpu::GpuArray<float> in(0, 1024), out(0, 1024);
    std::vector<float*> ins(gpus, in.data()), outs(gpus, out.data());
    lonely.run(Algorithm::kOneShot, ins, outs, 1024, streams, 1);  // GPU 0 only
    multi_gpu::synchronize_all(gpus);
    const bool reported = !lonely.report_timeout();
    verifier.expect("GPU 0 alone: its wait timed out and named GPU 0, the start barrier and a missing peer",
                    reported && lonely.timeout(0).gpu == 0 && lonely.timeout(0).step == allreduce::kStart &&
                        lonely.timeout(0).peer != 0);
    if (cli.get_flag("call-again")) lonely.run(Algorithm::kOneShot, ins, outs, 1024, streams);  // must exit 1
    return verifier.finish("08_allreduce");
  }

  const size_t max_n = *std::max_element(counts.begin(), counts.end());
  tutorial::require_device_memory(4 * max_n * sizeof(float), "Four buffers of the largest message");
  std::vector<multi_gpu::GpuArray<float>> in, out, reg_in, reg_out;
  std::vector<float*> ins, outs, reg_ins, reg_outs;  // reg_: NCCL's registered buffers
  std::vector<multi_gpu::GpuArray<allreduce_check::Findings>> findings;
  for (int d = 0; d < gpus; ++d) {
    in.emplace_back(d, max_n);
    out.emplace_back(d, max_n);
    findings.emplace_back(d, 1);
    ins.push_back(in.back().data());
    outs.push_back(out.back().data());
    if (cli.get_flag("nccl-only") || cli.get_flag("no-nccl")) continue;
    reg_in.emplace_back(d, max_n);
    reg_out.emplace_back(d, max_n);
    reg_ins.push_back(reg_in.back().data());
    reg_outs.push_back(reg_out.back().data());
  }

  std::unique_ptr<allreduce::PeerAllReduce> mine;
  if (ours) {
    mine = std::make_unique<allreduce::PeerAllReduce>(gpus, kernel_timeout_ns);
    mine->set_max_blocks(int(cli.get_int("max-blocks")));
  }
  std::vector<ncclComm_t> comms(gpus);
  std::vector<void*> registered;  // ncclCommRegister's handles: comm d's are [2d] and [2d + 1]
  if (nccl) {
    multi_gpu::require_matching_nccl();
    auto wait = multi_gpu::waiting("ncclCommInitAll");
    NCCL_CHECK(ncclCommInitAll(comms.data(), gpus, nullptr));  // devices 0 .. gpus-1
    // As PyTorch's watchdog does: ncclCommAbort from the watchdog's thread stops NCCL's kernels.
    watchdog.add_abort([&comms] {
      for (ncclComm_t comm : comms) ncclCommAbort(comm);
    });
  }
  watchdog.set_explain([&] {
    std::string who = arrivals.missing();
    who = who.empty() ? "every GPU reached the collective" : who + " never reached the collective (its stream is "
                                                                   "stuck behind earlier work)";
    for (int d = 0; mine && d < gpus; ++d)
      if (mine->timeout(d).happened) who += "; " + allreduce::describe(mine->timeout(d));
    return who;
  });
  // [excerpt:nccl-call]
  auto nccl_all_reduce = [&](const std::vector<float*>& in, const std::vector<float*>& out, size_t n) {
    NCCL_CHECK(ncclGroupStart());  // one thread, many GPUs: queue all, then launch together
    for (int d = 0; d < gpus; ++d)
      NCCL_CHECK(ncclAllReduce(in[d], out[d], n, ncclFloat, ncclSum, comms[d], streams[d]));
    NCCL_CHECK(ncclGroupEnd());
  };
  // [/excerpt:nccl-call]
  auto nccl_on = [&](std::vector<float*> in, std::vector<float*> out) {
    return [&nccl_all_reduce, in, out](size_t n) { nccl_all_reduce(in, out, n); };
  };
  auto run_empty = [&](size_t) {
    for (int d = 0; d < gpus; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      empty_kernel<<<1, 1, 0, streams[d]>>>();
      CUDA_CHECK_LAUNCH();
    }
  };
  auto ours_with = [&](Algorithm a) {
    return Method{allreduce::name(a), [&, a](size_t n) { mine->run(a, ins, outs, n, streams); }, ins, outs,
                  allreduce::max_floats(a, gpus), true};
  };
  std::vector<Method> methods;  // NCCL's first, the floor last: the tables below expect this order
  if (nccl) methods.push_back({"NCCL", nccl_on(ins, outs), ins, outs, SIZE_MAX, true});
  if (nccl && ours) {
    // NCCL told where its own pair of buffers is, once: it may then skip its staging copies.
    registered.resize(2 * gpus);
    ncclResult_t result = ncclSuccess;
    for (int d = 0; d < gpus && result == ncclSuccess; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      result = ncclCommRegister(comms[d], reg_ins[d], max_n * sizeof(float), &registered[2 * d]);
      if (result == ncclSuccess)
        result = ncclCommRegister(comms[d], reg_outs[d], max_n * sizeof(float), &registered[2 * d + 1]);
    }
    if (result == ncclSuccess)
      methods.push_back({"NCCL registered", nccl_on(reg_ins, reg_outs), reg_ins, reg_outs, SIZE_MAX, false});
    else  // said, not hidden: the race then runs against plain NCCL only
      std::printf("ncclCommRegister refused these buffers (%s): NCCL with registered buffers is left out.\n",
                  ncclGetErrorString(result));
  }
  if (ours)
    for (Algorithm a : {Algorithm::kOneShotLL, Algorithm::kOneShot, Algorithm::kTwoStage}) methods.push_back(ours_with(a));
  if (ours)  // for large messages: the all-gather half on the copy engines
    methods.push_back({"two-stage, copy-engine gather",
                       [&](size_t n) { mine->run_copy_engine_gather(ins, outs, n, streams); }, ins, outs, SIZE_MAX,
                       false, (16u << 20) / sizeof(float)});
  const bool timing = !cli.get_flag("check-only") && nccl;
  if (timing && ours) methods.push_back({"empty kernel", run_empty, {}, {}, SIZE_MAX, true});

  auto finish_and_check = [&] {
    multi_gpu::synchronize_all(gpus);
    if (mine && !mine->report_timeout()) std::exit(tutorial::kExitFailure);
    if (nccl)
      for (ncclComm_t comm : comms) NCCL_CHECK_ASYNC(comm);
  };

  // Exact answers, every method, every size, every GPU: inputs and check on the GPU.
  for (size_t n : counts)
    for (const Method& m : methods) {
      if (n > m.max_n || (n < m.min_n && cli.get_int("n") == 0) || m.name == "empty kernel") continue;
      for (int d = 0; d < gpus; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        allreduce_check::fill_async(m.in[d], n, d, 0, streams[d]);
        CUDA_CHECK(cudaMemsetAsync(m.out[d], 0xFF, n * sizeof(float), streams[d]));  // NaN: unwritten fails
        CUDA_CHECK(cudaMemsetAsync(findings[d].data(), 0, sizeof(allreduce_check::Findings), streams[d]));
      }
      arrivals.mark(streams);
      m.run(n);
      double worst = 0;
      for (int d = 0; d < gpus; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        allreduce_check::check_async(m.out[d], n, gpus, 0, findings[d].data(), false, streams[d]);
      }
      finish_and_check();
      for (int d = 0; d < gpus; ++d) {
        const double e = allreduce_check::worst_error(findings[d].download()[0]);
        worst = std::isnan(e) || std::isnan(worst) ? NAN : std::max(worst, e);
      }
      verifier.exact(tutorial::format("%s, %s (n = %zu), all %d GPUs", m.name.c_str(), multi_gpu::size_label(n * 4).c_str(), n, gpus),
                     worst);
    }
  {  // Random inputs against a float64 sum, at an odd count.
    const size_t n = std::min<size_t>(max_n, 100003);
    std::mt19937 rng(8);
    std::uniform_real_distribution<float> uniform(-1, 1);
    std::vector<std::vector<float>> host(gpus, std::vector<float>(n));
    std::vector<double> reference(n, 0.0);
    for (int d = 0; d < gpus; ++d)
      for (size_t i = 0; i < n; ++i) reference[i] += host[d][i] = uniform(rng);
    for (const Method& m : methods) {
      if (n > m.max_n || m.name == "empty kernel") continue;
      for (int d = 0; d < gpus; ++d) {
        CUDA_CHECK(cudaMemcpy(m.in[d], host[d].data(), n * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(m.out[d], 0xFF, n * sizeof(float)));
      }
      multi_gpu::synchronize_all(gpus);  // the streams are non-blocking: they would not wait
      m.run(n);
      finish_and_check();
      std::vector<float> got(n);
      CUDA_CHECK(cudaMemcpy(got.data(), m.out[gpus - 1], n * sizeof(float), cudaMemcpyDeviceToHost));
      verifier.within(tutorial::format("%s, random floats, n = %zu, against a float64 sum", m.name.c_str(), n),
                      tutorial::relative_error(got.data(), reference.data(), n), 1e-6);
    }
  }
  if (!timing) {
    if (nccl)
      for (ncclComm_t comm : comms) NCCL_CHECK(ncclCommDestroy(comm));
    return verifier.finish("08_allreduce");
  }

  multi_gpu::BatchTimer timer(streams, &arrivals);
  const double bus_factor = 2.0 * (gpus - 1) / gpus;
  const long long runs = cli.get_int("runs"), rounds = cli.get_int("rounds");
  const int graph_calls = int(cli.get_int("graph-calls"));
  // samples[eager or graph][method]
  struct Samples {
    std::vector<double> eager, graph;
  };
  auto index_named = [&](const std::string& name) {
    for (size_t k = 0; k < methods.size(); ++k)
      if (methods[k].name == name) return k;
    return SIZE_MAX;
  };
  auto index_of = [&](Algorithm a) { return index_named(allreduce::name(a)); };
  const size_t nccl_index = 0, floor_index = methods.size() - 1, reg_index = index_named("NCCL registered");
  std::vector<allreduce::Candidate> candidates;
  if (ours) {
    // [excerpt:calibrate]
    // The pick, made before any size is timed: every candidate timed at two sizes (eager batches,
    // 10 runs), its alpha and beta fitted, then at each size the one the model predicts fastest.
    candidates = allreduce::kernel_candidates(gpus, max_n * sizeof(float));
    if (max_n * sizeof(float) >= (32u << 20))  // the copy engines gather from 16 MiB up
      candidates.push_back({"two-stage, copy-engine gather", Algorithm::kTwoStage, 16u << 20,
                            std::min<size_t>(max_n * sizeof(float), 256u << 20), SIZE_MAX, 16u << 20});
    allreduce::calibrate(candidates, gpus, [&](const allreduce::Candidate& c, size_t bytes) {
      const Method& m = methods[index_named(c.name)];
      return median(timer.time([&] { m.run(bytes / sizeof(float)); }, 10)) * 1e3;
    });
    // [/excerpt:calibrate]
    tutorial::Table fit({"Candidate", "timed at", "alpha (us)", "beta (GB/s sent per GPU)"});
    for (const allreduce::Candidate& c : candidates) {
      fit.add_row({c.name, multi_gpu::size_label(c.small_bytes) + ", " + multi_gpu::size_label(c.large_bytes),
                   tutorial::format("%.2f", c.alpha_us), tutorial::format("%.1f", c.beta_gbs)});
      const std::string key = c.name == "one-shot LL" ? "ll" : c.name == "one-shot" ? "one_shot"
                              : c.name == "two-stage" ? "two_stage" : "ce_gather";
      verifier.figure("fit_alpha_us_" + key, std::round(c.alpha_us * 100) / 100);
      verifier.figure("fit_beta_gbs_" + key, round1(c.beta_gbs));
    }
    std::printf("\n### The model, fitted on this machine before the timed sizes: t = alpha + bytes sent per GPU / beta\n\n");
    fit.print();
    std::printf("\n");
  }
  std::printf("\n### All-reduce of fp32 on %d GPUs (median of %lld x %lld runs each, interleaved)\n\n"
              "Bus bandwidth = size / time x 2(n-1)/n = %.2f: the bytes each GPU's links carry. Eager: calls "
              "launched one by one; graph: %d calls per CUDA graph, time per call. Spread: half the "
              "interquartile range, as a share of the median.\n\n",
              gpus, rounds, runs, bus_factor, graph_calls);
  std::vector<std::string> header = {"Size"};
  for (const Method& m : methods) header.push_back(m.name);
  header.insert(header.end(), {"picked", "vs NCCL", "spread", "picked bus GB/s", "NCCL bus GB/s", "model's time",
                               "ours fastest", "pick vs fastest", "8 GPUs: model's pick"});
  tutorial::Table eager_table(header), sweep_table({"Size", "NCCL in a graph", "spread", "bus GB/s"}), graph_table({"Size", "empty kernel eager", "empty kernel graph", "NCCL eager",
                                                    "NCCL graph", "picked eager", "picked graph", "graph: picked vs NCCL"});
  double eager_worst = INFINITY, small_worst = INFINITY, large_worst = INFINITY, graph_small_worst = INFINITY;
  double pick_worst = INFINITY, pick_worst_spread = 0;
  double graph_256k = NAN, busbw_largest = NAN, ce_busbw_largest = NAN, kernel_busbw_largest = NAN;
  for (size_t n : counts) {
    const size_t bytes = n * sizeof(float);
    const std::string label = multi_gpu::size_label(bytes);
    const int stall = int(cli.get_int("test-stall-gpu"));
    if (stall >= 0 && n == counts[counts.size() / 2]) {  // in the middle of the run: a stream stuck for good
      std::printf("Test: GPU %d's stream stalls now, before the %s batches.\n", stall, label.c_str());
      std::fflush(stdout);
      CUDA_CHECK(cudaSetDevice(stall));
      multi_gpu::stall_kernel<<<1, 1, 0, streams[stall]>>>((deadline_ms + 60'000) * 1'000'000ull);
      CUDA_CHECK_LAUNCH();
    }
    const bool graphs_here = bytes <= size_t(cli.get_int("graph-max-bytes")) || !ours;
    // NCCL-only (the protocol sweep): fewer calls per graph for large messages, ~64 MiB per replay.
    const int calls = ours ? graph_calls : int(std::clamp<size_t>((64u << 20) / bytes, 1, size_t(graph_calls)));
    std::vector<std::unique_ptr<Graphs>> graphs(methods.size());
    for (size_t k = 0; k < methods.size(); ++k)
      if (graphs_here && methods[k].graph && n <= methods[k].max_n) {
        const Method& m = methods[k];
        graphs[k] = std::make_unique<Graphs>(streams, [&] {
          for (int c = 0; c < calls; ++c) m.run(n);
        });
      }
    std::vector<Samples> samples(methods.size());
    for (long long r = 0; r < rounds; ++r)
      for (size_t k = 0; k < methods.size(); ++k) {
        const size_t which = (k + r) % methods.size();  // rotate who goes first
        if (n > methods[which].max_n || n < methods[which].min_n) continue;
        if (ours) {
          const std::vector<double> t = timer.time([&] { methods[which].run(n); }, int(runs));
          samples[which].eager.insert(samples[which].eager.end(), t.begin(), t.end());
        }
        if (graphs[which]) {
          const std::vector<double> t = timer.time([&] { graphs[which]->replay(); }, int(runs), 1, false);
          for (double ms : t) samples[which].graph.push_back(ms / calls);
        }
      }
    finish_and_check();
    auto busbw = [&](double ms) { return bytes / (ms * 1e6) * bus_factor; };
    if (!ours) {  // the sweep: NCCL in graphs only
      const double t = median(samples[nccl_index].graph);
      sweep_table.add_row({label, tutorial::format_time(t), tutorial::format("%.1f%%", spread_pct(samples[nccl_index].graph)),
                           tutorial::format("%.1f", busbw(t))});
      verifier.figure("nccl_graph_us_" + label, round1(t * 1e3));
      verifier.figure("nccl_graph_busbw_" + label, round1(busbw(t)));
      continue;
    }
    const allreduce::Candidate& chosen = candidates[allreduce::pick(candidates, gpus, bytes)];
    const size_t picked = index_named(chosen.name);
    const double t_nccl = median(samples[nccl_index].eager);
    const double t_reg = reg_index == SIZE_MAX ? INFINITY : median(samples[reg_index].eager);
    const double t_best_nccl = std::min(t_nccl, t_reg), t_pick = median(samples[picked].eager);
    size_t fastest = picked;  // of ours, measured
    for (const allreduce::Candidate& c : candidates) {
      const size_t k = index_named(c.name);
      if (!samples[k].eager.empty() && median(samples[k].eager) < median(samples[fastest].eager)) fastest = k;
    }
    const double t_fastest = median(samples[fastest].eager);
    if (t_fastest / t_pick < pick_worst) {
      pick_worst = t_fastest / t_pick;
      pick_worst_spread = std::max(spread_pct(samples[picked].eager), spread_pct(samples[fastest].eager));
    }
    const allreduce::Candidate& at8 = candidates[allreduce::pick(candidates, 8, bytes)];
    std::vector<std::string> row = {label};
    for (const Samples& s : samples) row.push_back(s.eager.empty() ? "-" : tutorial::format_time(median(s.eager)));
    row.insert(row.end(), {methods[picked].name, tutorial::format("%.2fx", t_best_nccl / t_pick),
                           tutorial::format("%.1f%%", spread_pct(samples[picked].eager)),
                           tutorial::format("%.1f", busbw(t_pick)), tutorial::format("%.1f", busbw(t_best_nccl)),
                           tutorial::format_time(chosen.predict_us(gpus, bytes) / 1e3), methods[fastest].name,
                           tutorial::format("%.1f%%", 100 * t_fastest / t_pick),
                           tutorial::format("%s, %s", at8.name.c_str(), tutorial::format_time(at8.predict_us(8, bytes) / 1e3).c_str())});
    eager_table.add_row(row);
    verifier.figure("model_us_" + label, round1(chosen.predict_us(gpus, bytes)));
    verifier.figure("model_8gpus_us_" + label, round1(at8.predict_us(8, bytes)));
    verifier.figure("nccl_us_" + label, round1(t_nccl * 1e3));
    if (reg_index != SIZE_MAX) verifier.figure("nccl_registered_us_" + label, round1(t_reg * 1e3));
    verifier.figure("mine_us_" + label, round1(t_pick * 1e3));
    verifier.figure("nccl_busbw_" + label, round1(busbw(t_nccl)));
    verifier.figure("mine_busbw_" + label, round1(busbw(t_pick)));
    verifier.figure("floor_eager_us_" + label, round1(median(samples[floor_index].eager) * 1e3));
    const size_t ce = index_named("two-stage, copy-engine gather");
    if (!samples[ce].eager.empty()) {
      ce_busbw_largest = busbw(median(samples[ce].eager));
      verifier.figure("ce_gather_busbw_" + label, round1(ce_busbw_largest));
    }
    eager_worst = std::min(eager_worst, t_best_nccl / t_pick);
    if (bytes <= (256u << 10)) small_worst = std::min(small_worst, t_best_nccl / t_pick);
    if (bytes == (256u << 20) || bytes == (1u << 30)) large_worst = std::min(large_worst, t_best_nccl / t_pick);
    busbw_largest = busbw(t_pick);
    kernel_busbw_largest = busbw(median(samples[index_of(Algorithm::kTwoStage)].eager));
    if (graphs[picked]) {
      const double g_nccl = median(samples[nccl_index].graph), g_pick = median(samples[picked].graph);
      const double g_floor = median(samples[floor_index].graph);
      graph_table.add_row({label, tutorial::format_time(median(samples[floor_index].eager)), tutorial::format_time(g_floor),
                           tutorial::format_time(t_nccl), tutorial::format_time(g_nccl), tutorial::format_time(t_pick),
                           tutorial::format_time(g_pick), tutorial::format("%.2fx", g_nccl / g_pick)});
      verifier.figure("nccl_graph_us_" + label, round1(g_nccl * 1e3));
      verifier.figure("mine_graph_us_" + label, std::round(g_pick * 1e5) / 100);
      verifier.figure("floor_graph_us_" + label, std::round(g_floor * 1e5) / 100);
      for (Algorithm a : {Algorithm::kOneShotLL, Algorithm::kOneShot, Algorithm::kTwoStage})
        if (!samples[index_of(a)].graph.empty())
          verifier.figure(tutorial::format("graph_us_%s_%s", a == Algorithm::kOneShotLL ? "ll" : a == Algorithm::kOneShot ? "one_shot" : "two_stage",
                                           label.c_str()),
                          std::round(median(samples[index_of(a)].graph) * 1e5) / 100);
      if (bytes <= (64u << 10)) graph_small_worst = std::min(graph_small_worst, g_nccl / g_pick);
      if (bytes == (256u << 10)) graph_256k = g_nccl / g_pick;
    }
  }
  (ours ? eager_table : sweep_table).print();
  std::printf("\n");
  if (!ours) {
    for (ncclComm_t comm : comms) NCCL_CHECK(ncclCommDestroy(comm));
    return verifier.finish("08_allreduce");
  }
  std::printf("### The same calls, eager and in CUDA graphs\n\n");
  graph_table.print();
  std::printf("\n");

  // The copy engine, every GPU sending to the next at once (both directions on two GPUs): the
  // rate a large all-reduce, which keeps every link busy both ways, can hope for.
  double copy_gbs = NAN;
  if (max_n * sizeof(float) >= (64u << 20)) {
    const size_t bytes = max_n * sizeof(float);
    std::vector<cudaEvent_t> done(gpus);
    for (int d = 0; d < gpus; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaEventCreateWithFlags(&done[d], cudaEventDisableTiming));
    }
    auto copy_all = [&] {
      for (int d = 0; d < gpus; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMemcpyPeerAsync(outs[(d + 1) % gpus], (d + 1) % gpus, ins[d], d, bytes, streams[d]));
        CUDA_CHECK(cudaEventRecord(done[d], streams[d]));
      }
      CUDA_CHECK(cudaSetDevice(0));
      for (int d = 1; d < gpus; ++d) CUDA_CHECK(cudaStreamWaitEvent(streams[0], done[d], 0));  // GPU 0 times all
    };
    const double t = median(timer.time(copy_all, int(std::min<long long>(runs, 10))));
    copy_gbs = bytes / (t * 1e6);
    for (cudaEvent_t e : done) CUDA_CHECK(cudaEventDestroy(e));
    std::printf("Copy engine, every GPU sending %s to the next at once: %.1f GB/s per direction; our bus bandwidth "
                "at %s: %.1f GB/s (%.1f%%)\n\n", multi_gpu::size_label(bytes).c_str(), copy_gbs, multi_gpu::size_label(bytes).c_str(),
                busbw_largest, 100 * busbw_largest / copy_gbs);
    verifier.figure("copy_engine_both_ways_gbs", round1(copy_gbs));
    verifier.figure("mine_pct_of_copy_engine_largest", round1(100 * busbw_largest / copy_gbs));
    verifier.figure("two_stage_pct_of_copy_engine_largest", round1(100 * kernel_busbw_largest / copy_gbs));
    if (std::isfinite(ce_busbw_largest)) {
      std::printf("Two-stage with the copy engines gathering: %.1f GB/s (%.1f%% of the copy engine)\n\n", ce_busbw_largest,
                  100 * ce_busbw_largest / copy_gbs);
      verifier.figure("ce_gather_pct_of_copy_engine_largest", round1(100 * ce_busbw_largest / copy_gbs));
    }
  }
  verifier.figure("gpus", gpus);
  verifier.figure("picked_pct_of_nccl_worst", round1(100 * eager_worst));
  if (std::isfinite(small_worst)) verifier.figure("one_shot_speedup_worst_small", std::round(100 * small_worst) / 100);
  if (std::isfinite(large_worst)) verifier.figure("two_stage_pct_of_nccl_busbw_large", round1(100 * large_worst));
  if (std::isfinite(graph_small_worst)) {
    verifier.figure("graph_speedup_worst_up_to_64KiB", std::round(100 * graph_small_worst) / 100);
    verifier.goal("in CUDA graphs, ours vs NCCL, worst size up to 64 KiB", graph_small_worst, 2.5, "x");
  }
  if (std::isfinite(graph_256k)) {
    verifier.figure("graph_speedup_256KiB", std::round(100 * graph_256k) / 100);
    verifier.goal("in CUDA graphs, ours vs NCCL at 256 KiB", graph_256k, 2.0, "x");
  }
  verifier.goal("eager, ours vs NCCL's best (plain or registered), worst size", eager_worst, 1.0, "x");
  if (std::isfinite(pick_worst)) {  // within 5%, or within the spread where that is wider
    verifier.figure("pick_pct_of_fastest_worst", round1(100 * pick_worst));
    verifier.figure("pick_spread_pct_at_worst", round1(pick_worst_spread));
    verifier.goal(tutorial::format("the model's pick as a share of our fastest, worst size (spread there %.1f%%)",
                                   pick_worst_spread), 100 * pick_worst, std::min(95.0, 100 - pick_worst_spread), "%");
  }
  if (std::isfinite(large_worst))
    verifier.goal("ours vs NCCL's best, worst of 256 MiB and 1 GiB", large_worst, 1.0, "x");
  if (std::isfinite(copy_gbs))
    verifier.goal("bus bandwidth at the largest size as a share of the copy engine's, both ways busy",
                  100 * busbw_largest / copy_gbs, 90, "%");
  for (int d = 0; d < gpus && reg_index != SIZE_MAX; ++d) {
    NCCL_CHECK(ncclCommDeregister(comms[d], registered[2 * d]));
    NCCL_CHECK(ncclCommDeregister(comms[d], registered[2 * d + 1]));
  }
  for (ncclComm_t comm : comms) NCCL_CHECK(ncclCommDestroy(comm));
  return verifier.finish("08_allreduce");
}
