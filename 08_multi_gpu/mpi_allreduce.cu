// Chapter 08, part 5: one process per GPU, started by mpirun (or srun), the way real jobs run.
//
//   mpirun -np 2 ./build/bin/08_mpi_allreduce                 # one host, 2 GPUs
//   mpirun -np 16 -H a:8,b:8 ./build/bin/08_mpi_allreduce     # two hosts of 8 GPUs
//   srun --ntasks-per-node=8 --gpus-per-node=8 ./build/bin/08_mpi_allreduce   # SLURM
//
// MPI gives each process its rank and, among the processes on its host, the GPU it takes.
// Rank 0 makes NCCL's unique id and MPI_Bcast hands it to every rank; all join with
// ncclCommInitRank. On one host the same processes also run step 3's kernels over buffers
// shared through CUDA IPC (ipc_allreduce.cuh). Every method is checked exactly at every size on
// every rank, then raced in interleaved batches, each rank's batch behind a gate that opens
// after an MPI barrier, so the GPUs, not the hosts, set the pace.
// Test modes: --hang-nccl and --hang-mine (one rank never calls: the others must say which,
// and the job must end; mpi_hang.cuh), --network (NCCL forced onto its socket transport, over
// loopback: two hosts without InfiniBand, simulated).
#include <unistd.h>

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
#include "ipc_allreduce.cuh"
#include "mpi_hang.cuh"
#include "mpi_job.hpp"
#include "nccl_check.hpp"

namespace {

/// Runs of `run` on this process's stream, timed between events like step 3's batches: the
/// batch waits behind a gate kernel while the host queues it, and the gate opens once every rank
/// has queued its own (an MPI barrier), so all ranks start together.
class GateTimer {
 public:
  GateTimer(cudaStream_t stream, mpi_job::Progress& progress) : stream_(stream), progress_(progress) {
    CUDA_CHECK(cudaHostAlloc(&host_, 2 * sizeof(int), cudaHostAllocMapped));
  }
  ~GateTimer() { cudaFreeHost(host_); }
  GateTimer(const GateTimer&) = delete;
  GateTimer& operator=(const GateTimer&) = delete;

  std::vector<double> time(const std::function<void()>& run, int runs) {
    progress_.step();  // this rank reached the batch (the watchdog of a rank left waiting reads it)
    run();  // warm-up
    {
      auto wait = multi_gpu::waiting("the warm-up call (cudaStreamSynchronize)");
      CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    host_[0] = host_[1] = 0;  // gate closed, no timeout
    multi_gpu::gate_kernel<<<1, 1, 0, stream_>>>(host_, host_ + 1, 10'000'000'000ull);
    CUDA_CHECK_LAUNCH();
    std::vector<cudaEvent_t> marks(runs + 1);
    for (cudaEvent_t& mark : marks) CUDA_CHECK(cudaEventCreate(&mark));
    CUDA_CHECK(cudaEventRecord(marks[0], stream_));
    for (int i = 0; i < runs; ++i) {
      run();
      CUDA_CHECK(cudaEventRecord(marks[i + 1], stream_));
    }
    mpi_job::barrier();  // every rank has queued its batch
    cuda::atomic_ref<int, cuda::thread_scope_system>(host_[0]).store(1, cuda::memory_order_release);
    {
      auto wait = multi_gpu::waiting("a timed batch (cudaStreamSynchronize)");
      CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    if (host_[1]) {
      std::fprintf(stderr, "A gate waited 10 s for the host: queueing the batch blocked.\n");
      mpi_job::abort_job(tutorial::kExitFailure);
    }
    return multi_gpu::intervals_ms(marks);
  }

 private:
  cudaStream_t stream_;
  mpi_job::Progress& progress_;
  int* host_ = nullptr;
};

// [excerpt:mpi-stress]
/// --stress: calls cycling through our algorithms at random sizes, the same sequence on every rank
/// (one seed), each rank's inputs made and its answers checked on its GPU, so the host never waits
/// per call and the ranks drift apart as they will. Every 1000 calls the ranks post their progress.
void stress(const mpi_job::Job& job, multi_gpu::IpcAllReduce& mine, size_t max_n, long long calls,
            cudaStream_t stream, mpi_job::Progress& progress, tutorial::Verifier& verifier) {
  multi_gpu::GpuArray<allreduce_check::Findings> findings(job.local_rank, 1);
  CUDA_CHECK(cudaMemset(findings.data(), 0, sizeof(allreduce_check::Findings)));
  std::mt19937_64 rng(2026);
  const allreduce::Algorithm cycle[] = {allreduce::Algorithm::kOneShotLL, allreduce::Algorithm::kOneShot,
                                        allreduce::Algorithm::kTwoStage};
  for (long long c = 1; c <= calls; ++c) {
    const allreduce::Algorithm a = cycle[c % 3];
    const size_t top = std::min(allreduce::max_floats(a, job.world), max_n);
    const size_t n = rng() % 4 == 0 ? 1 + rng() % 64 : std::max<size_t>(1, size_t(std::exp2(double(rng() % 1000) / 1000 *
                                                                                               std::log2(double(top)))));
    allreduce_check::fill_async(mine.in(), n, job.rank, unsigned(c), stream);
    mine.run(a, n, stream);
    allreduce_check::check_async(mine.out(), n, job.world, unsigned(c), findings.data(), true, stream);
    if (c % 1000 == 0) progress.step();
  }
  {
    auto wait = multi_gpu::waiting("the stress calls (cudaStreamSynchronize)");
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  const double wrong = mpi_job::max_over_ranks(double(findings.download()[0].wrong));
  const bool timed_out = mpi_job::min_over_ranks(!mine.timed_out()) == 0;
  std::printf("stress: %lld calls on %d ranks cycling LL / one-shot / two-stage at random sizes: %.0f wrong outputs "
              "on the worst rank\n", calls, job.world, wrong);
  verifier.expect(tutorial::format("stress: %lld calls over CUDA IPC, no wait timed out", calls), !timed_out);
  verifier.expect(tutorial::format("stress: %lld calls over CUDA IPC, every output on every rank exact", calls),
                  wrong == 0);
}
// [/excerpt:mpi-stress]

/// Where each rank runs, for the first lines of the output (two hosts show two names).
struct Place {
  char host[64];
  char gpu[256];  // cudaDeviceProp::name's size
  int device;
};

/// Whether this rank's GPU can reach every other GPU on the host directly (CUDA IPC needs it).
bool peers_reachable(const mpi_job::Job& job) {
  for (int other = 0; other < job.local_world; ++other) {
    int can = 1;
    if (other != job.local_rank) CUDA_CHECK(cudaDeviceCanAccessPeer(&can, job.local_rank, other));
    if (!can) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("08_mpi_allreduce", "One process per GPU under mpirun: NCCL (its id sent by MPI_Bcast) and our "
                                        "own all-reduce over CUDA IPC, exact at every size, raced.");
  multi_gpu::add_message_size_options(cli);
  cli.add_int("runs", "timed runs per batch", 20, 1, 1000);
  cli.add_int("rounds", "batches per method and size, interleaved", 3, 1, 100);
  cli.add_flag("check-only", "verify every size, time nothing");
  cli.add_flag("nccl-only", "NCCL alone (no IPC all-reduce)");
  cli.add_flag("no-nccl", "our kernels only (for compute-sanitizer)");
  cli.add_flag("network", "force NCCL onto its network transport over loopback (NCCL_P2P_DISABLE=1, "
                          "NCCL_SHM_DISABLE=1, NCCL_SOCKET_IFNAME=lo): two hosts without InfiniBand, simulated");
  cli.add_flag("nccl-debug", "NCCL_DEBUG=INFO: NCCL says which transport it chose");
  cli.add_flag("hang-nccl", "test: the last rank never calls NCCL's all-reduce; the others must notice and end the job");
  cli.add_flag("hang-mine", "test: the same with our own all-reduce's bounded wait");
  cli.add_int("stress", "test: this many calls of our kernels at random sizes, checked on the GPUs (0: none)", 0, 0,
              10000000);
  multi_gpu::add_deadline_option(cli);
  cli.parse_or_exit(argc, argv);
  const std::vector<size_t> counts = multi_gpu::message_counts(cli);  // floats per message
  if (cli.get_flag("nccl-only") && cli.get_flag("no-nccl")) {
    std::fputs(cli.error_line("--nccl-only and --no-nccl exclude each other").c_str(), stderr);
    return tutorial::kExitUsage;
  }
  const bool nccl = !cli.get_flag("no-nccl");
  // NCCL reads its environment when a communicator is made: set before, in this process.
  multi_gpu::force_nvls_off();
  if (cli.get_flag("network")) {
    setenv("NCCL_P2P_DISABLE", "1", 1);
    setenv("NCCL_SHM_DISABLE", "1", 1);
    setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  }
  if (cli.get_flag("nccl-debug")) setenv("NCCL_DEBUG", "INFO", 1);

  const mpi_job::Job job = mpi_job::start(&argc, &argv);  // rank, world, and the rank on this host
  // [excerpt:mpi-watchdog]
  // Every wait under one deadline (watchdog.hpp). Each rank posts how far it got, and that it is
  // alive, in memory the other ranks of its host read directly: past the deadline a rank left
  // waiting names the rank that stopped answering or never came, aborts NCCL and ends (exit 1);
  // mpirun then ends the job.
  const long long deadline_ms = cli.get_int("deadline-ms");
  multi_gpu::Watchdog watchdog(deadline_ms, tutorial::format("rank %d", job.rank));
  mpi_job::Progress progress;
  watchdog.set_tick([&progress] { progress.alive(); });
  watchdog.set_explain([&progress, &job] { return progress.who_is_missing(job.rank); });
  // [/excerpt:mpi-watchdog]
  // Only rank 0 prints the report; the others run the same checks on the same (every rank's)
  // numbers, so every rank ends with the same exit code. Errors still go to stderr from any rank.
  if (job.rank != 0 && !std::freopen("/dev/null", "w", stdout)) return tutorial::kExitFailure;
  if (job.world < 2) {
    std::fprintf(stderr, "08_mpi_allreduce: start one process per GPU, at least 2: mpirun -np 2 %s\n", argv[0]);
    mpi_job::finish();
    return tutorial::kExitUsage;
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) {
    (void)cudaGetLastError();
    gpus = 0;
  }
  if (mpi_job::min_over_ranks(gpus >= job.local_world) == 0) {  // every rank skips, or none
    if (job.rank == 0)
      std::fprintf(stderr, "No usable CUDA GPU for every process: %d processes on this host, %d GPUs (one each is "
                           "needed). Skipping (exit code %d).\n", job.local_world, gpus, tutorial::kExitNoGpu);
    mpi_job::finish();
    return tutorial::kExitNoGpu;
  }
  // [excerpt:nccl-id]
  CUDA_CHECK(cudaSetDevice(job.local_rank));  // GPU i of this host for its i-th process
  ncclUniqueId id;
  if (job.rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));  // rank 0's address, for the others to find it
  mpi_job::broadcast(&id, sizeof id, 0);
  // [/excerpt:nccl-id]
  Place place{};
  gethostname(place.host, sizeof place.host - 1);
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, job.local_rank));
  std::snprintf(place.gpu, sizeof place.gpu, "%s", prop.name);
  place.device = job.local_rank;
  std::vector<Place> places(job.world);
  mpi_job::all_gather(&place, places.data(), sizeof place);
  for (int r = 0; r < job.world; ++r)
    std::printf("rank %d: host %s, GPU %d (%s)\n", r, places[r].host, places[r].device, places[r].gpu);
  if (job.rank == 0 && nccl) multi_gpu::require_matching_nccl();
  std::fflush(stdout);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const double deadline_s = deadline_ms / 1000.0;
  if (cli.get_flag("hang-nccl")) return multi_gpu::hang_nccl(job, id, stream, deadline_s, progress);

  // Our kernels need every rank on one host, each GPU able to reach the others.
  const bool one_host = job.local_world == job.world;
  const bool ipc = !cli.get_flag("nccl-only") && one_host && mpi_job::min_over_ranks(peers_reachable(job));
  if (!ipc && !cli.get_flag("nccl-only")) {
    std::printf("Our all-reduce is left out: %s.\n", one_host ? "the GPUs cannot reach each other's memory"
                                                              : "CUDA IPC does not cross hosts");
  }
  if ((!nccl || cli.get_flag("hang-mine")) && !ipc) {
    std::fprintf(stderr, "Nothing to run without our all-reduce: skipping (exit code %d).\n", tutorial::kExitNoGpu);
    mpi_job::finish();
    return tutorial::kExitNoGpu;
  }
  if (cli.get_flag("hang-mine")) return multi_gpu::hang_mine(job, stream, deadline_s, progress);

  const size_t max_n = *std::max_element(counts.begin(), counts.end());
  std::vector<size_t> checked = counts;  // and odd counts, exact too: the kernels' tails
  if (cli.get_int("n") == 0)
    for (size_t odd : {size_t(1), size_t(7), size_t(1000003)})
      if (odd <= max_n) checked.push_back(odd);
  tutorial::require_device_memory(3 * max_n * sizeof(float), "Input, output and NCCL's room for the largest message");

  std::unique_ptr<multi_gpu::IpcAllReduce> mine;
  multi_gpu::GpuArray<float> own_in, own_out;  // NCCL's buffers when our all-reduce is left out
  float *in = nullptr, *out = nullptr;
  if (ipc) {
    mine = std::make_unique<multi_gpu::IpcAllReduce>(job, max_n, stream, deadline_ms * 500'000ull);
    in = mine->in();
    out = mine->out();
  } else {
    own_in = multi_gpu::GpuArray<float>(job.local_rank, max_n);
    own_out = multi_gpu::GpuArray<float>(job.local_rank, max_n);
    in = own_in.data();
    out = own_out.data();
  }
  ncclComm_t comm = nullptr;
  if (nccl) {
    auto wait = multi_gpu::waiting("ncclCommInitRank (it waits until every rank joins)");
    NCCL_CHECK(ncclCommInitRank(&comm, job.world, id, job.rank));
    watchdog.add_abort([&comm] { ncclCommAbort(comm); });  // stops NCCL's kernels, as PyTorch's watchdog does
  }

  struct Method {
    std::string name;
    std::function<void(size_t)> run;
    size_t max_n;  // the largest message it takes
    int algorithm;  // ours: allreduce::Algorithm; NCCL: -1
  };
  std::vector<Method> methods;
  if (nccl)
    methods.push_back({"NCCL", [&](size_t n) {
      NCCL_CHECK(ncclAllReduce(in, out, n, ncclFloat, ncclSum, comm, stream));  // this rank's part only
    }, SIZE_MAX, -1});
  if (ipc)  // our all-reduces (allreduce.cuh's reduce-scatter alone is not one)
    for (allreduce::Algorithm algorithm :
         {allreduce::Algorithm::kOneShotLL, allreduce::Algorithm::kOneShot, allreduce::Algorithm::kTwoStage})
      methods.push_back({allreduce::name(algorithm), [&, algorithm](size_t n) { mine->run(algorithm, n, stream); },
                         allreduce::max_floats(algorithm, job.world), int(algorithm)});
  auto finish_and_check = [&] {
    {
      auto wait = multi_gpu::waiting("an all-reduce (cudaStreamSynchronize)");
      CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    if (mine && mpi_job::min_over_ranks(!mine->timed_out()) == 0) {
      if (mine->timed_out()) std::fprintf(stderr, "rank %d: %s\n", job.rank, allreduce::describe(mine->timeout()).c_str());
      mpi_job::abort_job(tutorial::kExitFailure);
    }
    if (nccl) NCCL_CHECK_ASYNC(comm);
  };
  auto upload = [&](const std::vector<float>& host) {
    auto wait = multi_gpu::waiting("a copy to the GPU");
    CUDA_CHECK(cudaMemcpy(in, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());  // the stream is non-blocking: it would not wait
  };
  tutorial::Verifier verifier;
  if (cli.get_int("stress") > 0) {
    if (!ipc) {
      std::fprintf(stderr, "--stress runs our kernels, which need every rank on one host: skipping (exit code %d).\n",
                   tutorial::kExitNoGpu);
      mpi_job::finish();
      return tutorial::kExitNoGpu;
    }
    stress(job, *mine, max_n, cli.get_int("stress"), stream, progress, verifier);
    if (nccl) NCCL_CHECK(ncclCommDestroy(comm));
    mine.reset();
    const int code = verifier.finish("08_mpi_allreduce");
    mpi_job::finish();
    return code;
  }

  {  // Exact answers: every method, every size, every rank (outputs poisoned first).
    std::vector<float> host(max_n), expected(max_n, 0.0f);
    for (size_t i = 0; i < max_n; ++i) {
      host[i] = multi_gpu::exact_input(job.rank, i);
      for (int r = 0; r < job.world; ++r) expected[i] += multi_gpu::exact_input(r, i);
    }
    upload(host);
    std::vector<float> got(max_n);
    for (size_t n : checked)
      for (const Method& m : methods) {
        if (n > m.max_n) continue;
        CUDA_CHECK(cudaMemset(out, 0xFF, n * sizeof(float)));
        CUDA_CHECK(cudaDeviceSynchronize());
        mpi_job::barrier();  // no rank's kernel writes into a peer still poisoning
        progress.step();
        m.run(n);
        finish_and_check();
        CUDA_CHECK(cudaMemcpy(got.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
        const double worst = multi_gpu::worst_over_ranks(tutorial::max_abs_error(got.data(), expected.data(), n));
        verifier.exact(tutorial::format("%s, %s (n = %zu), all %d ranks", m.name.c_str(),
                                        multi_gpu::size_label(n * 4).c_str(), n, job.world), worst);
      }
  }
  {  // Random inputs against a float64 sum, at an odd count. Every rank draws every rank's inputs.
    const size_t n = std::min<size_t>(max_n, 100003);
    std::vector<float> host(n);
    std::vector<double> reference(n, 0.0);
    for (int r = 0; r < job.world; ++r) {
      std::mt19937 rng(8 + r);
      std::uniform_real_distribution<float> uniform(-1, 1);
      for (size_t i = 0; i < n; ++i) {
        const float x = uniform(rng);
        reference[i] += x;
        if (r == job.rank) host[i] = x;
      }
    }
    upload(host);
    std::vector<float> got(n);
    for (const Method& m : methods) {
      if (n > m.max_n) continue;
      CUDA_CHECK(cudaMemset(out, 0xFF, n * sizeof(float)));
      CUDA_CHECK(cudaDeviceSynchronize());
      mpi_job::barrier();
      progress.step();
      m.run(n);
      finish_and_check();
      CUDA_CHECK(cudaMemcpy(got.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
      const double error = tutorial::relative_error(got.data(), reference.data(), n);
      verifier.within(tutorial::format("%s, random floats, n = %zu, against a float64 sum", m.name.c_str(), n),
                      multi_gpu::worst_over_ranks(error), 1e-6);
    }
  }

  if (!cli.get_flag("check-only")) {
    GateTimer timer(stream, progress);
    const int runs = int(cli.get_int("runs")), rounds = int(cli.get_int("rounds"));
    // The pick, as in 08_allreduce: each kernel timed at two sizes, alpha and beta fitted, before the
    // timed sizes. Every rank fits the slowest rank's times, so all ranks pick alike.
    std::vector<allreduce::Candidate> candidates;
    if (ipc && nccl) {
      candidates = allreduce::kernel_candidates(job.world, max_n * sizeof(float));
      allreduce::calibrate(candidates, job.world, [&](const allreduce::Candidate& c, size_t bytes) {
        const std::vector<double> t = timer.time([&] { mine->run(c.model, bytes / sizeof(float), stream); }, 10);
        return mpi_job::max_over_ranks(tutorial::summarize(t).median_ms * 1e3);
      });
      for (const allreduce::Candidate& c : candidates)
        std::printf("Model: %s, alpha %.2f us, beta %.1f GB/s sent per GPU (timed at %s and %s)\n", c.name.c_str(),
                    c.alpha_us, c.beta_gbs, multi_gpu::size_label(c.small_bytes).c_str(),
                    multi_gpu::size_label(c.large_bytes).c_str());
    }
    const double bus_factor = 2.0 * (job.world - 1) / job.world;
    std::printf("\n### All-reduce of fp32, %d processes%s (median of %d x %d runs each, interleaved; rank 0's clock)\n\n"
                "Bus bandwidth = size / time x 2(n-1)/n = %.2f. Spread: the batches' medians, lowest to highest, "
                "as a share of the median.\n\n", job.world, cli.get_flag("network") ? ", NCCL over sockets" : "",
                rounds, runs, bus_factor);
    std::fflush(stdout);  // the fault tests wait for this line before they stop a rank
    std::vector<std::string> header = {"Size"};
    for (const Method& m : methods) {
      header.push_back(m.name);
      header.push_back(m.name + " spread");
    }
    if (nccl) header.push_back("NCCL bus GB/s");
    if (ipc && nccl) header.insert(header.end(), {"picked vs NCCL", "picked bus GB/s"});
    tutorial::Table table(header);
    double picked_worst = INFINITY;
    for (size_t n : counts) {
      const size_t bytes = n * sizeof(float);
      std::vector<std::vector<double>> samples(methods.size()), batch_medians(methods.size());
      for (int r = 0; r < rounds; ++r)
        for (size_t k = 0; k < methods.size(); ++k) {
          const size_t which = (k + r) % methods.size();  // rotate who goes first
          if (n > methods[which].max_n) continue;
          const std::vector<double> t = timer.time([&] { methods[which].run(n); }, runs);
          samples[which].insert(samples[which].end(), t.begin(), t.end());
          batch_medians[which].push_back(tutorial::summarize(t).median_ms);
        }
      finish_and_check();
      const std::string label = multi_gpu::size_label(bytes);
      std::vector<std::string> row = {label};
      std::vector<double> median(methods.size(), NAN);
      for (size_t k = 0; k < methods.size(); ++k) {
        if (samples[k].empty()) {
          row.insert(row.end(), {"-", "-"});
          continue;
        }
        median[k] = tutorial::summarize(samples[k]).median_ms;
        const tutorial::Timing spread = tutorial::summarize(batch_medians[k]);
        row.push_back(tutorial::format_time(median[k]));
        row.push_back(tutorial::format("%.0f%%", 100 * (spread.max_ms - spread.min_ms) / median[k]));
      }
      auto busbw = [&](double ms) { return bytes / (ms * 1e6) * bus_factor; };
      if (nccl) {
        row.push_back(tutorial::format("%.1f", busbw(median[0])));
        verifier.figure("nccl_us_" + label, std::round(median[0] * 1e4) / 10);
        verifier.figure("nccl_busbw_" + label, std::round(busbw(median[0]) * 10) / 10);
      }
      if (ipc && nccl) {
        const allreduce::Algorithm picked = candidates[allreduce::pick(candidates, job.world, bytes)].model;
        double t_pick = NAN;
        for (size_t k = 0; k < methods.size(); ++k)
          if (methods[k].algorithm == int(picked)) t_pick = median[k];
        row.push_back(tutorial::format("%.2fx (%s)", median[0] / t_pick, allreduce::name(picked)));
        row.push_back(tutorial::format("%.1f", busbw(t_pick)));
        verifier.figure("mine_us_" + label, std::round(t_pick * 1e4) / 10);
        picked_worst = std::min(picked_worst, median[0] / t_pick);
      }
      table.add_row(row);
    }
    table.print();
    std::printf("\n");
    verifier.figure("gpus", job.world);
    if (std::isfinite(picked_worst)) {
      verifier.figure("picked_pct_of_nccl_worst", std::round(1000 * picked_worst) / 10);
      verifier.goal("our all-reduce across processes, speed as a share of NCCL's, worst size", 100 * picked_worst,
                    95.2, "%");
    }
  }
  if (nccl) NCCL_CHECK(ncclCommDestroy(comm));
  CUDA_CHECK(cudaStreamDestroy(stream));
  mine.reset();  // collective: unmaps the peers' buffers before any rank frees its own
  const int code = verifier.finish("08_mpi_allreduce");
  std::fflush(stdout);
  mpi_job::finish();
  return code;
}
