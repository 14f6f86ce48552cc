// Chapter 08: tests that the chapter's all-reduce kernels survive what a benchmark never does.
//
//  - overtake: GPU 1's waiting threads pause between their own flag store and their first load,
//    long enough for GPU 0 to finish the call and start the next one, which writes a later epoch
//    over the flag GPU 1 is about to read. The barrier must still let GPU 1 through, exactly;
//  - in-place: in == out for every algorithm at odd sizes;
//  - stress: many back-to-back calls, cycling through the algorithms at random sizes (odd counts
//    and each algorithm's largest size included), a fifth of them in place, with sleeps of random
//    length queued on GPU 1 so the GPUs drift apart. Inputs are made on the GPU and differ every
//    call; answers are checked on the GPU (then poisoned); the host never waits per call;
//  - --misuse: calls the kernels refuse (message and exit 2).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <tutorial/cli.hpp>

#include "allreduce.cuh"
#include "allreduce_check.cuh"

namespace {

using allreduce::Algorithm;

struct Gpus {
  int count;
  std::vector<cudaStream_t> streams;
  std::vector<multi_gpu::GpuArray<float>> in, out;
  std::vector<multi_gpu::GpuArray<allreduce_check::Findings>> findings;

  Gpus(int gpus, size_t n) : count(gpus), streams(multi_gpu::make_streams(gpus)) {
    for (int d = 0; d < gpus; ++d) {
      in.emplace_back(d, n);
      out.emplace_back(d, n);
      findings.emplace_back(d, 1);
      CUDA_CHECK(cudaMemset(findings.back().data(), 0, sizeof(allreduce_check::Findings)));
    }
    multi_gpu::synchronize_all(gpus);
  }
  std::vector<float*> ins() const { return pointers(in); }
  std::vector<float*> outs() const { return pointers(out); }
  static std::vector<float*> pointers(const std::vector<multi_gpu::GpuArray<float>>& a) {
    std::vector<float*> p;
    for (const auto& x : a) p.push_back(x.data());
    return p;
  }
  /// Every GPU's findings since the last call, summed; then cleared.
  allreduce_check::Findings collect() {
    multi_gpu::synchronize_all(count);
    allreduce_check::Findings all{};
    for (auto& f : findings) {
      const allreduce_check::Findings one = f.download()[0];
      all.wrong += one.wrong;
      all.worst_bits = std::max(all.worst_bits, one.worst_bits);
      CUDA_CHECK(cudaSetDevice(f.device()));
      CUDA_CHECK(cudaMemset(f.data(), 0, sizeof(allreduce_check::Findings)));
    }
    multi_gpu::synchronize_all(count);
    return all;
  }
  /// Call `call`'s inputs on every GPU (into `to`, which may be the outputs for an in-place call).
  void fill(const std::vector<float*>& to, size_t n, unsigned call) {
    for (int d = 0; d < count; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      allreduce_check::fill_async(to[d], n, d, call, streams[d]);
    }
  }
  void check(size_t n, unsigned call) {
    for (int d = 0; d < count; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      allreduce_check::check_async(out[d].data(), n, count, call, findings[d].data(), true, streams[d]);
    }
  }
};

std::string describe(const allreduce_check::Findings& f) {
  return tutorial::format("%llu wrong", f.wrong);
}

// [excerpt:overtake-test]
/// Two calls; in the first, GPU 1 pauses after storing its flag, so GPU 0 finishes that call and
/// stores the second call's epoch into GPU 1's flag before GPU 1 first looks at it. (Only the
/// one-shot has a single barrier per call: the two-stage's peer cannot reach the same barrier of
/// the next call without passing two barriers that wait for us.)
void test_overtake(Gpus& g, tutorial::Verifier& verifier) {
  const size_t n = 65539;
  allreduce::PeerAllReduce ar(g.count, 2'000'000'000ull);
  std::vector<multi_gpu::GpuArray<float>> in2, out2;
  for (int d = 0; d < g.count; ++d) {
    in2.emplace_back(d, n);
    out2.emplace_back(d, n);
  }
  g.fill(g.ins(), n, 1);
  g.fill(Gpus::pointers(in2), n, 2);
  const unsigned before = ar.overtakes(1);
  ar.run(Algorithm::kOneShot, g.ins(), g.outs(), n, g.streams, -1, 1, 300'000'000ull);  // GPU 1 pauses 0.3 s
  ar.run(Algorithm::kOneShot, Gpus::pointers(in2), Gpus::pointers(out2), n, g.streams);  // GPU 0 runs ahead
  multi_gpu::synchronize_all(g.count);
  const bool no_timeout = ar.report_timeout();
  for (int d = 0; d < g.count; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    allreduce_check::check_async(g.out[d].data(), n, g.count, 1, g.findings[d].data(), true, g.streams[d]);
    allreduce_check::check_async(out2[d].data(), n, g.count, 2, g.findings[d].data(), true, g.streams[d]);
  }
  const allreduce_check::Findings f = g.collect();
  const unsigned overtakes = ar.overtakes(1) - before;
  std::printf("overtake: GPU 1 found GPU 0 a call ahead at %u barrier waits\n", overtakes);
  verifier.expect("overtake: GPU 0 overtook the paused GPU 1 (a later epoch in its flag)", overtakes > 0);
  verifier.expect("overtake: no wait timed out although GPU 0 overtook GPU 1", no_timeout);
  verifier.exact(tutorial::format("overtake: both calls exact on every GPU (%s)", describe(f).c_str()),
                 allreduce_check::worst_error(f));
}
// [/excerpt:overtake-test]

void test_in_place(Gpus& g, tutorial::Verifier& verifier) {
  allreduce::PeerAllReduce ar(g.count);
  unsigned call = 10;
  for (Algorithm a : {Algorithm::kOneShotLL, Algorithm::kOneShot, Algorithm::kTwoStage})
    for (size_t n : {size_t(1), size_t(3), size_t(7), size_t(4099), allreduce::max_floats(a, g.count) - 1}) {
      n = std::min(n, g.in[0].size());
      ++call;
      g.fill(g.outs(), n, call);
      ar.run(a, g.outs(), g.outs(), n, g.streams);
      g.check(n, call);
      multi_gpu::synchronize_all(g.count);
      if (!ar.report_timeout()) std::exit(tutorial::kExitFailure);
      const allreduce_check::Findings f = g.collect();
      verifier.exact(tutorial::format("%s in place (in == out), n = %zu, every GPU", allreduce::name(a), n),
                     allreduce_check::worst_error(f));
    }
}

// [excerpt:stress]
void test_stress(Gpus& g, long long calls, unsigned seed, tutorial::Verifier& verifier) {
  allreduce::PeerAllReduce ar(g.count);
  std::mt19937_64 rng(seed);
  const Algorithm cycle[] = {Algorithm::kOneShotLL, Algorithm::kOneShot, Algorithm::kTwoStage};
  const size_t largest = g.in[0].size();
  auto random_n = [&](Algorithm a) -> size_t {
    const size_t top = std::min(allreduce::max_floats(a, g.count), largest);
    switch (rng() % 4) {
      case 0: return 1 + rng() % 64;                  // tiny, odd and even
      case 1: return top - rng() % 8;                 // at the algorithm's largest size
      default: return std::max<size_t>(1, size_t(std::exp2(double(rng() % 1000) / 1000 * std::log2(double(top)))));
    }
  };
  long long sleeps = 0, in_place = 0;
  const auto start = std::chrono::steady_clock::now();
  for (long long c = 1; c <= calls; ++c) {
    const Algorithm a = cycle[c % 3];
    const size_t n = random_n(a);
    const bool same = rng() % 5 == 0;
    if (rng() % 4 == 0) {  // GPU 1 falls behind by up to 20 us
      CUDA_CHECK(cudaSetDevice(1));
      multi_gpu::stall_kernel<<<1, 1, 0, g.streams[1]>>>(rng() % 20'000);
      CUDA_CHECK_LAUNCH();
      ++sleeps;
    }
    const std::vector<float*> in = same ? g.outs() : g.ins();
    g.fill(in, n, unsigned(c));
    ar.run(a, in, g.outs(), n, g.streams);
    g.check(n, unsigned(c));
    in_place += same;
  }
  multi_gpu::synchronize_all(g.count);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool no_timeout = ar.report_timeout();
  const allreduce_check::Findings f = g.collect();
  std::printf("stress: %lld calls (%lld in place, %lld sleeps on GPU 1) in %.1f s, seed %u: %llu wrong outputs\n",
              calls, in_place, sleeps, seconds, seed, f.wrong);
  verifier.expect(tutorial::format("stress: %lld calls, no wait timed out", calls), no_timeout);
  verifier.exact(tutorial::format("stress: %lld calls cycling LL / one-shot / two-stage at random sizes, every "
                                  "output on every GPU exact (%s)", calls, describe(f).c_str()),
                 allreduce_check::worst_error(f));
}
// [/excerpt:stress]

/// Calls the kernels must refuse; each exits 2 with a message, before any kernel runs.
void misuse(Gpus& g, const std::string& what) {
  allreduce::Peers peers{};
  for (int d = 0; d < g.count; ++d) {
    peers.in[d] = g.in[d].data();
    peers.out[d] = g.out[d].data();
    peers.workspace[d] = g.out[d].data();  // never used: every call below is refused first
  }
  allreduce::Timeout timeout{};
  CUDA_CHECK(cudaSetDevice(0));
  if (what == "gpus") allreduce::launch(Algorithm::kOneShot, peers, 0, allreduce::kMaxGpus + 1, 64, g.streams[0], &timeout, 1);
  if (what == "misaligned") {
    peers.in[1] += 1;  // 4 bytes off: a float4 load there would kill the context
    allreduce::launch(Algorithm::kTwoStage, peers, 0, g.count, 64, g.streams[0], &timeout, 1);
  }
  if (what == "too-large")
    allreduce::launch(Algorithm::kOneShotLL, peers, 0, g.count, allreduce::kLLMaxFloats + 1, g.streams[0], &timeout, 1);
  std::fprintf(stderr, "--misuse %s: the call was not refused\n", what.c_str());
  std::exit(tutorial::kExitFailure);
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("08_allreduce_test", "The all-reduce kernels under stress: a peer that overtakes a "
                                         "waiting GPU, in-place calls, and many calls at random sizes.");
  cli.add_int("calls", "stress calls (0: no stress run)", 100000, 0, 10000000);
  cli.add_int("seed", "random seed for the stress run", 8, 0, 1LL << 31);
  cli.add_int("max-floats", "largest message of the in-place and stress runs (small for compute-sanitizer)",
              2 * allreduce::kOneShotMaxFloats, 65539, 2 * allreduce::kOneShotMaxFloats);
  cli.add_string("misuse", "make a call the kernels must refuse", "", {"", "gpus", "misaligned", "too-large"});
  cli.parse_or_exit(argc, argv);

  multi_gpu::force_nvls_off();
  const int gpus = multi_gpu::require_gpus();
  tutorial::Verifier verifier;
  multi_gpu::enable_all_peers(gpus, &verifier);
  Gpus g(gpus, size_t(cli.get_int("max-floats")));  // by default past one-shot's largest, for two-stage
  if (!cli.get_string("misuse").empty()) misuse(g, cli.get_string("misuse"));

  test_overtake(g, verifier);
  test_in_place(g, verifier);
  if (cli.get_int("calls") > 0) test_stress(g, cli.get_int("calls"), unsigned(cli.get_int("seed")), verifier);
  return verifier.finish("08_allreduce_test");
}
