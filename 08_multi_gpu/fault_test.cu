// Chapter 08: the all-reduce kernels after something went wrong. Each test is a defect a careful
// reader found in an earlier version; each fails on that version and passes now (NOTES.md shows both).
// The rule they hold the kernels to: a call either returns the exact sum on every GPU, or it says it
// failed, and then every element of every GPU's output is the exact sum or NaN, never stale, never
// someone else's data.
//
//  - barrier-wrap: every block's call counter started at 2^31 + 5 (as after 2^31 calls of one
//    algorithm), its flags left at 0: a GPU alone must time out, not pass the barrier with no peer;
//    all together, exact;
//  - ll-wrap: the LL counter at 2^32 - 1, whose next call's 32-bit epoch was 0, the value of a fresh
//    line: a GPU alone must time out, not sum zeros; all together across the wrap, exact;
//  - replay: six LL calls in a CUDA graph, GPU 1's stream stalled past the timeout before the replay:
//    no output may be stale or hold another call's data;
//  - grids: the GPUs launch different grids (injected below any agreement): refused or exact;
//  - graph-stress: many calls of every algorithm at random sizes captured in graphs, replayed: exact;
//  - fault-stress: rounds of random calls in which a random GPU stalls past the timeout: after each
//    failure every output exact or NaN.
// It uses only what every version of allreduce.cuh offers (launch, the workspace, its Control block),
// so the same file builds against an old commit.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <array>
#include <random>
#include <string>
#include <type_traits>
#include <tutorial/cli.hpp>

#include "allreduce.cuh"
#include "allreduce_check.cuh"

namespace {

using allreduce::Algorithm;
constexpr unsigned long long kTimeoutNs = 200'000'000ull;  // 0.2 s: the tests wait on purpose
constexpr float kStale = 12345.0f;                         // what an output holds before the call

// Its own stall kernel, not multi_gpu::stall_kernel: this file also compiles against the old
// commit's headers (old_commit_check.sh), where allreduce::sleep_ns is all there is. The test of
// ns: CUDA 11.8's ptxas crashes on sm_90 with -lineinfo when a kernel's whole body is that loop.
__global__ void stall(unsigned long long ns) {
  if (ns > 0) allreduce::sleep_ns(ns);
}

/// An output element is exact, NaN (poisoned), or neither: stale or wrong. Counted on the GPU.
struct Verdict {
  unsigned long long exact, poisoned, other;
};
__global__ void classify(const float* out, size_t n, int gpus, unsigned call, Verdict* v) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float expected = 0;
    for (int g = 0; g < gpus; ++g) expected += allreduce_check::input(g, i, call);
    atomicAdd(std::isnan(out[i]) ? &v->poisoned : out[i] == expected ? &v->exact : &v->other, 1ull);
  }
}
__global__ void fill_value(float* out, size_t n, float value) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = value;
}

/// Every GPU's workspace, a Timeout each, and streams: the communicator, without PeerAllReduce.
struct Comm {
  int gpus;
  std::vector<cudaStream_t> streams;
  std::vector<void*> workspace;
  allreduce::Timeout* timeouts = nullptr;  // mapped: read while the GPUs still run

  explicit Comm(int count) : gpus(count), streams(multi_gpu::make_streams(count)), workspace(count) {
    for (int d = 0; d < gpus; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaMalloc(&workspace[d], allreduce::workspace_bytes(gpus)));
      allreduce::init_workspace(workspace[d], gpus, streams[d]);
    }
    CUDA_CHECK(cudaHostAlloc(&timeouts, gpus * sizeof(allreduce::Timeout), cudaHostAllocMapped | cudaHostAllocPortable));
    std::memset(timeouts, 0, gpus * sizeof(allreduce::Timeout));
    multi_gpu::synchronize_all(gpus);
  }
  ~Comm() {
    for (int d = 0; d < gpus; ++d) {
      cudaSetDevice(d);
      cudaFree(workspace[d]);
      cudaStreamDestroy(streams[d]);
    }
    cudaFreeHost(timeouts);
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  bool failed() const {
    for (int d = 0; d < gpus; ++d)
      if (timeouts[d].happened) return true;
    return false;
  }
  /// Sets every block's call counter of \p algorithm to \p calls on every GPU, as if that many calls
  /// had run (the counter's type is whatever this version of Control uses).
  void set_calls(Algorithm algorithm, unsigned long long calls) {
    using Count = std::remove_all_extents_t<decltype(allreduce::Control::calls)>;
    std::vector<Count> slots(allreduce::kMaxBlocks, Count(calls));
    for (int d = 0; d < gpus; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      char* at = static_cast<char*>(workspace[d]) + offsetof(allreduce::Control, calls) +
                 size_t(algorithm) * allreduce::kMaxBlocks * sizeof(Count);
      CUDA_CHECK(cudaMemcpy(at, slots.data(), slots.size() * sizeof(Count), cudaMemcpyHostToDevice));
    }
  }
  /// One call on GPUs [0, launching), each with its own grid cap (0: one block per SM).
  void run(Algorithm algorithm, const std::vector<float*>& in, const std::vector<float*>& out, size_t n,
           int launching = -1, const std::vector<int>& max_blocks = {}) {
    allreduce::Peers peers{};
    for (int d = 0; d < gpus; ++d) {
      peers.in[d] = in[d];
      peers.out[d] = out[d];
      peers.workspace[d] = workspace[d];
    }
    for (int d = 0; d < (launching < 0 ? gpus : launching); ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      allreduce::launch(algorithm, peers, d, gpus, n, streams[d], &timeouts[d], kTimeoutNs, 0,
                        max_blocks.empty() ? 0 : max_blocks[d]);
    }
  }
};

/// Ends every GPU's capture, then instantiates each graph: while one stream of this thread is still
/// capturing, instantiating is refused (cudaErrorStreamCaptureUnsupported).
void instantiate_captures(const Comm& c, std::vector<cudaGraphExec_t>& execs) {
  std::vector<cudaGraph_t> graphs(c.gpus);
  for (int d = 0; d < c.gpus; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaStreamEndCapture(c.streams[d], &graphs[d]));
  }
  for (int d = 0; d < c.gpus; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaGraphInstantiateWithFlags(&execs[d], graphs[d], 0));
    CUDA_CHECK(cudaGraphDestroy(graphs[d]));
  }
}

/// Buffers on every GPU for `calls` calls of n floats: inputs filled for each call, outputs stale.
struct Buffers {
  std::vector<std::vector<multi_gpu::GpuArray<float>>> in, out;  // [call][gpu]
  Buffers(const Comm& c, int calls, size_t n, unsigned first_call) : in(calls), out(calls) {
    for (int k = 0; k < calls; ++k)
      for (int d = 0; d < c.gpus; ++d) {
        in[k].emplace_back(d, n);
        out[k].emplace_back(d, n);
        CUDA_CHECK(cudaSetDevice(d));
        allreduce_check::fill_async(in[k][d].data(), n, d, first_call + k, c.streams[d]);
        fill_value<<<64, 256, 0, c.streams[d]>>>(out[k][d].data(), n, kStale);
        CUDA_CHECK_LAUNCH();
      }
    multi_gpu::synchronize_all(c.gpus);
  }
  static std::vector<float*> pointers(const std::vector<multi_gpu::GpuArray<float>>& a) {
    std::vector<float*> p;
    for (const auto& x : a) p.push_back(x.data());
    return p;
  }
};

/// Every GPU's verdict on call k's outputs (after the GPUs are done).
Verdict judge(const Comm& c, const Buffers& b, int k, size_t n, unsigned call, int gpus_checked = -1) {
  Verdict total{};
  for (int d = 0; d < (gpus_checked < 0 ? c.gpus : gpus_checked); ++d) {
    multi_gpu::GpuArray<Verdict> v(d, 1);
    CUDA_CHECK(cudaMemset(v.data(), 0, sizeof(Verdict)));
    classify<<<64, 256>>>(b.out[k][d].data(), n, c.gpus, call, v.data());
    CUDA_CHECK_LAUNCH();
    const Verdict one = v.download()[0];
    total.exact += one.exact;
    total.poisoned += one.poisoned;
    total.other += one.other;
  }
  return total;
}

std::string show(const Verdict& v) {
  return tutorial::format("%llu exact, %llu NaN, %llu stale or wrong", v.exact, v.poisoned, v.other);
}

/// A GPU alone, the others never launching: the call must fail and say so, not return an answer.
void alone_must_time_out(int gpus, Algorithm a, unsigned long long calls, const char* test, tutorial::Verifier& verifier) {
  Comm c(gpus);
  c.set_calls(a, calls);
  const size_t n = 4099;
  Buffers b(c, 1, n, 1);
  c.run(a, Buffers::pointers(b.in[0]), Buffers::pointers(b.out[0]), n, 1);
  multi_gpu::synchronize_all(gpus);
  const Verdict v = judge(c, b, 0, n, 1, 1);
  std::printf("%s: GPU 0 alone, counter at %llu: %s; %s\n", test, calls, c.failed() ? "timed out" : "returned",
              show(v).c_str());
  verifier.expect(tutorial::format("%s: GPU 0 alone (%s) times out instead of passing with no peer", test,
                                   allreduce::name(a)), c.failed() && v.other == 0);
}

/// Every GPU, \p calls calls starting with the counter at \p first: exact every time.
void together_exact(int gpus, Algorithm a, unsigned long long first, int calls, const char* test,
                    tutorial::Verifier& verifier) {
  Comm c(gpus);
  c.set_calls(a, first);
  const size_t n = 100003;
  Buffers b(c, calls, n, 1);
  for (int k = 0; k < calls; ++k) c.run(a, Buffers::pointers(b.in[k]), Buffers::pointers(b.out[k]), n);
  multi_gpu::synchronize_all(gpus);
  Verdict all{};
  for (int k = 0; k < calls; ++k) {
    const Verdict v = judge(c, b, k, n, 1 + k);
    all.exact += v.exact, all.poisoned += v.poisoned, all.other += v.other;
  }
  std::printf("%s: every GPU, %d calls from counter %llu: %s\n", test, calls, first, show(all).c_str());
  verifier.expect(tutorial::format("%s: %d calls across the counter's old wrap (%s) exact on every GPU", test, calls,
                                   allreduce::name(a)), !c.failed() && all.poisoned == 0 && all.other == 0);
}

// [excerpt:replay-test]
/// Six LL calls in one graph per GPU; GPU 1's stream stalls past the timeout before the replay, so
/// GPU 0's first call gives up. Each call has its own inputs and outputs: a stale output, or one
/// summed from another call's data, shows as "stale or wrong".
void test_replay(int gpus, tutorial::Verifier& verifier) {
  Comm c(gpus);
  const int calls = 6;
  const size_t n = 4099;
  Buffers b(c, calls, n, 1);
  std::vector<cudaGraphExec_t> execs(gpus);
  for (int d = 0; d < gpus; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaStreamBeginCapture(c.streams[d], cudaStreamCaptureModeThreadLocal));
  }
  for (int k = 0; k < calls; ++k) c.run(Algorithm::kOneShotLL, Buffers::pointers(b.in[k]), Buffers::pointers(b.out[k]), n);
  instantiate_captures(c, execs);
  CUDA_CHECK(cudaSetDevice(1));
  stall<<<1, 1, 0, c.streams[1]>>>(3 * kTimeoutNs);  // GPU 1 falls behind by three timeouts
  CUDA_CHECK_LAUNCH();
  for (int d = 0; d < gpus; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaGraphLaunch(execs[d], c.streams[d]));  // no host between the calls: no refusal
  }
  multi_gpu::synchronize_all(gpus);
  Verdict all{};
  for (int k = 0; k < calls; ++k) {
    const Verdict v = judge(c, b, k, n, 1 + k);
    std::printf("replay: call %d: %s\n", k + 1, show(v).c_str());
    all.exact += v.exact, all.poisoned += v.poisoned, all.other += v.other;
  }
  for (cudaGraphExec_t e : execs) CUDA_CHECK(cudaGraphExecDestroy(e));
  verifier.expect("replay: a wait gave up (GPU 1 stalled past the timeout)", c.failed());
  verifier.expect("replay: after the timeout every output element is exact or NaN on every GPU (" + show(all) + ")",
                  all.other == 0);
}
// [/excerpt:replay-test]

/// GPU d launches 8 (d + 1) blocks: the barriers' block pairs cut the data differently on each GPU.
void test_grids(int gpus, tutorial::Verifier& verifier) {
  std::vector<int> blocks;
  for (int d = 0; d < gpus; ++d) blocks.push_back(8 * (d + 1));
  for (Algorithm a : {Algorithm::kOneShot, Algorithm::kTwoStage, Algorithm::kOneShotLL}) {
    Comm c(gpus);
    const size_t n = std::min<size_t>(1000003, allreduce::max_floats(a, gpus));  // LL takes 2^18 floats
    const int calls = 3;
    Buffers b(c, calls, n, 1);
    for (int k = 0; k < calls && !c.failed(); ++k)
      c.run(a, Buffers::pointers(b.in[k]), Buffers::pointers(b.out[k]), n, -1, blocks);
    multi_gpu::synchronize_all(gpus);
    Verdict first = judge(c, b, 0, n, 1);
    std::printf("grids: %s, GPU d launches 8 (d + 1) blocks: %s; first call %s\n", allreduce::name(a),
                c.failed() ? "refused" : "ran", show(first).c_str());
    for (int d = 0; d < gpus; ++d)
      if (c.timeouts[d].happened) std::printf("  %s\n", allreduce::describe(c.timeouts[d]).c_str());
    const bool agreed = !c.failed() && first.other == 0 && first.poisoned == 0;
    verifier.expect(tutorial::format("grids: %s with different grids is refused (every element exact or NaN) or "
                                     "exact, never wrong", allreduce::name(a)),
                    first.other == 0 && (c.failed() || agreed));
  }
}

/// Random algorithm and size for a stress call, n at most `largest`.
struct RandomCalls {
  std::mt19937_64 rng;
  size_t largest;
  Algorithm algorithm() { return Algorithm(std::array<int, 3>{int(Algorithm::kOneShotLL), int(Algorithm::kOneShot),
                                                              int(Algorithm::kTwoStage)}[rng() % 3]); }
  size_t size(Algorithm a, int gpus) {
    const size_t top = std::min(allreduce::max_floats(a, gpus), largest);
    return rng() % 3 == 0 ? 1 + rng() % 64 : std::max<size_t>(1, size_t(std::exp2(double(rng() % 1000) / 1000 *
                                                                                     std::log2(double(top)))));
  }
};

// [excerpt:graph-stress]
/// 30 calls at random algorithms and sizes, each with its fill and check kernels, captured into one
/// graph per GPU and replayed: the check poisons each output after reading it, so a replay that
/// skipped a write cannot pass on the last replay's answer.
void test_graph_stress(int gpus, int replays, tutorial::Verifier& verifier) {
  Comm c(gpus);
  const int calls = 30;
  RandomCalls random{std::mt19937_64(42), size_t(1) << 20};
  std::vector<multi_gpu::GpuArray<float>> in, out;
  std::vector<multi_gpu::GpuArray<allreduce_check::Findings>> findings;
  for (int d = 0; d < gpus; ++d) {
    in.emplace_back(d, random.largest);
    out.emplace_back(d, random.largest);
    findings.emplace_back(d, 1);
    CUDA_CHECK(cudaMemset(findings.back().data(), 0, sizeof(allreduce_check::Findings)));
  }
  multi_gpu::synchronize_all(gpus);
  std::vector<cudaGraphExec_t> execs(gpus);
  for (int d = 0; d < gpus; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaStreamBeginCapture(c.streams[d], cudaStreamCaptureModeThreadLocal));
  }
  for (int k = 1; k <= calls; ++k) {
    const Algorithm a = random.algorithm();
    const size_t n = random.size(a, gpus);
    for (int d = 0; d < gpus; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      allreduce_check::fill_async(in[d].data(), n, d, k, c.streams[d]);
    }
    c.run(a, Buffers::pointers(in), Buffers::pointers(out), n);
    for (int d = 0; d < gpus; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      allreduce_check::check_async(out[d].data(), n, gpus, k, findings[d].data(), true, c.streams[d]);
    }
  }
  instantiate_captures(c, execs);
  for (int r = 0; r < replays; ++r)
    for (int d = 0; d < gpus; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaGraphLaunch(execs[d], c.streams[d]));
    }
  multi_gpu::synchronize_all(gpus);
  unsigned long long wrong = 0;
  for (int d = 0; d < gpus; ++d) wrong += findings[d].download()[0].wrong;
  for (cudaGraphExec_t e : execs) CUDA_CHECK(cudaGraphExecDestroy(e));
  std::printf("graph-stress: %d replays of %d random calls on %d GPUs: %llu wrong outputs\n", replays, calls, gpus, wrong);
  verifier.expect(tutorial::format("graph-stress: %d calls replayed in graphs, no wait timed out", replays * calls),
                  !c.failed());
  verifier.expect(tutorial::format("graph-stress: every output of %d replayed calls exact on every GPU", replays * calls),
                  wrong == 0);
}
// [/excerpt:graph-stress]

/// Rounds of random calls on a fresh communicator; in each, one random GPU stalls past the timeout
/// before a random call. Calls go on until the host sees the failure (the GPUs learn it earlier):
/// every call's every output must be exact or NaN.
void test_fault_stress(int gpus, int rounds, tutorial::Verifier& verifier) {
  RandomCalls random{std::mt19937_64(7), size_t(1) << 18};
  Verdict all{};
  int failed_rounds = 0;
  for (int r = 0; r < rounds; ++r) {
    Comm c(gpus);
    const int calls = 12, stalled_call = int(random.rng() % calls), stalled_gpu = int(random.rng() % gpus);
    std::vector<Algorithm> algorithms(calls);
    std::vector<size_t> sizes(calls);
    for (int k = 0; k < calls; ++k) {
      algorithms[k] = random.algorithm();
      sizes[k] = random.size(algorithms[k], gpus);
    }
    Buffers b(c, calls, random.largest, 1);
    int launched = 0;
    for (int k = 0; k < calls && !c.failed(); ++k, ++launched) {
      if (k == stalled_call) {
        CUDA_CHECK(cudaSetDevice(stalled_gpu));
        stall<<<1, 1, 0, c.streams[stalled_gpu]>>>(2 * kTimeoutNs);
        CUDA_CHECK_LAUNCH();
      }
      c.run(algorithms[k], Buffers::pointers(b.in[k]), Buffers::pointers(b.out[k]), sizes[k]);
    }
    multi_gpu::synchronize_all(gpus);
    failed_rounds += c.failed();
    for (int k = 0; k < launched; ++k) {
      const Verdict v = judge(c, b, k, sizes[k], 1 + k);
      all.exact += v.exact, all.poisoned += v.poisoned, all.other += v.other;
    }
  }
  std::printf("fault-stress: %d rounds, %d of them failed as planned: %s\n", rounds, failed_rounds, show(all).c_str());
  verifier.expect(tutorial::format("fault-stress: %d rounds with a GPU stalled past the timeout, every output element "
                                   "exact or NaN (%s)", rounds, show(all).c_str()), all.other == 0);
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("08_allreduce_faults", "The all-reduce kernels after a fault: counters near their wrap, a replay "
                                           "after a timeout, different grids, stress with faults: never a wrong answer.");
  cli.add_string("test", "run one test only", "", {"", "barrier-wrap", "ll-wrap", "replay", "grids", "graph-stress",
                                                   "fault-stress"});
  cli.add_int("replays", "graph-stress: replays of the 30-call graph", 200, 1, 100000);
  cli.add_int("rounds", "fault-stress: rounds, each with one stalled GPU", 20, 1, 10000);
  cli.parse_or_exit(argc, argv);
  const std::string only = cli.get_string("test");
  auto wanted = [&](const char* test) { return only.empty() || only == test; };

  multi_gpu::force_nvls_off();
  const int gpus = multi_gpu::require_gpus();
  tutorial::Verifier verifier;
  multi_gpu::enable_all_peers(gpus, &verifier);
  // [excerpt:wrap-tests]
  if (wanted("barrier-wrap")) {  // a flag slot idle for 2^31 calls must not read as "peer ahead"
    alone_must_time_out(gpus, Algorithm::kOneShot, (1ull << 31) + 5, "barrier-wrap", verifier);
    together_exact(gpus, Algorithm::kOneShot, (1ull << 31) + 5, 3, "barrier-wrap", verifier);
  }
  if (wanted("ll-wrap")) {  // the LL epoch after 2^32 - 1 calls must not match a line never written
    alone_must_time_out(gpus, Algorithm::kOneShotLL, (1ull << 32) - 1, "ll-wrap", verifier);
    together_exact(gpus, Algorithm::kOneShotLL, (1ull << 32) - 3, 6, "ll-wrap", verifier);
  }
  // [/excerpt:wrap-tests]
  if (wanted("replay")) test_replay(gpus, verifier);
  if (wanted("grids")) test_grids(gpus, verifier);
  if (wanted("graph-stress")) test_graph_stress(gpus, int(cli.get_int("replays")), verifier);
  if (wanted("fault-stress")) test_fault_stress(gpus, int(cli.get_int("rounds")), verifier);
  return verifier.finish("08_allreduce_faults");
}
