// Chapter 05, lesson "atomics", part 2: a message between blocks, and the memory model.
//
// Pairs of blocks pass a message: the producer writes kWords words of data, then sets a flag;
// the consumer waits for the flag, then reads the data. Four versions, each run many times:
//   release/acquire   cuda::atomic_ref (libcu++): store(release) and load(acquire)     correct
//   __threadfence     a fence before the flag and after it is seen, volatile flag      correct
//   no fence          relaxed flag, no ordering between flag and data                  wrong
//   plain load        the consumer reads the flag with a plain load, hoisted out of    wrong
//                     its loop by the compiler: it never sees the flag change
// Every wait is bounded (a number of spins), so no version can hang; a time-out is counted, as
// is a consumer that saw the flag but read stale data. (A bound read from the GPU's timer would
// not do: the compiler keeps loads inside a loop that holds inline assembly.)
// Last, what a fence costs at each scope (block, device, system).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cuda/atomic>
#include <tutorial/buffer.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>

namespace {

constexpr int kWords = 256;     // data words per message, one per producer thread
constexpr int kThreads = kWords;

__device__ long long now_ns() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

enum Version { kReleaseAcquire, kThreadfence, kNoFence, kPlainLoad };

struct Outcome {
  unsigned stale;      // consumers that saw the flag and then read old data
  unsigned timed_out;  // consumers that never saw the flag in time
  unsigned unpaired;   // producers that set the flag before their consumer was running
};

// Block 2p produces for block 2p+1. The producer sets the flag only once its consumer has said
// it is waiting, and `delay_ns` later: the consumer is then spinning when the flag changes.
template <Version version>
__global__ void message(int* data, int* flags, int round, long long delay_ns, long long max_spins, Outcome* out) {
  const int pair = blockIdx.x / 2;
  int* my_data = data + pair * kWords;
  int& flag = flags[2 * pair];
  cuda::atomic_ref<int, cuda::thread_scope_device> waiting(flags[2 * pair + 1]);
  __shared__ bool ready;
  if (blockIdx.x % 2 == 0) {  // producer
    my_data[threadIdx.x] = round;  // the message
    __syncthreads();               // all of the block's data written (block scope) ...
    if (threadIdx.x == 0) {
      const long long start = now_ns();
      while (waiting.load(cuda::memory_order_relaxed) != round && now_ns() - start < delay_ns * 1000) {}
      if (waiting.load(cuda::memory_order_relaxed) != round) atomicAdd(&out->unpaired, 1u);  // ran alone
      const long long seen = now_ns();
      while (now_ns() - seen < delay_ns) {}
      if constexpr (version == kReleaseAcquire) {
        // [excerpt:release]
        cuda::atomic_ref<int, cuda::thread_scope_device> f(flag);
        f.store(round, cuda::memory_order_release);  // data before flag, for the whole device
        // [/excerpt:release]
      } else if constexpr (version == kThreadfence) {
        // [excerpt:fence-producer]
        __threadfence();  // ... made visible device-wide before the flag
        *static_cast<volatile int*>(&flag) = round;
        // [/excerpt:fence-producer]
      } else {
        cuda::atomic_ref<int, cuda::thread_scope_device>(flag).store(round, cuda::memory_order_relaxed);
      }
    }
    return;
  }
  if (threadIdx.x == 0) {  // consumer: one thread waits, at most max_spins reads of the flag
    waiting.store(round, cuda::memory_order_relaxed);
    __threadfence();  // nothing below, not even a hoisted load, moves above this line
    bool seen = false;
    if constexpr (version == kReleaseAcquire) {
      // [excerpt:acquire]
      cuda::atomic_ref<int, cuda::thread_scope_device> f(flag);
      for (long long spin = 0; !seen && spin < max_spins; ++spin) seen = f.load(cuda::memory_order_acquire) == round;
      // [/excerpt:acquire]
    } else if constexpr (version == kThreadfence) {
      for (long long spin = 0; !seen && spin < max_spins; ++spin) seen = *static_cast<volatile int*>(&flag) == round;
      __threadfence();  // the data reads below stay after the flag read
    } else if constexpr (version == kNoFence) {
      cuda::atomic_ref<int, cuda::thread_scope_device> f(flag);
      for (long long spin = 0; !seen && spin < max_spins; ++spin) seen = f.load(cuda::memory_order_relaxed) == round;
    } else {
      // [excerpt:plain-load]
      for (long long spin = 0; !seen && spin < max_spins; ++spin) seen = flag == round;  // read once
      // [/excerpt:plain-load]
    }
    if (!seen) atomicAdd(&out->timed_out, 1u);
    ready = seen;
  }
  __syncthreads();
  if (ready && my_data[threadIdx.x] != round) atomicAdd(&out->stale, 1u);
}

struct Result {
  unsigned stale = 0, timed_out = 0, unpaired = 0, messages = 0;
};

template <Version version>
Result run(int pairs, int rounds, long long delay_ns, long long max_spins) {
  tutorial::DeviceBuffer<int> data(size_t(pairs) * kWords), flags(2 * size_t(pairs));
  tutorial::DeviceBuffer<Outcome> out(1);
  CUDA_CHECK(cudaMemset(data.data(), 0, data.bytes()));
  CUDA_CHECK(cudaMemset(flags.data(), 0, flags.bytes()));
  CUDA_CHECK(cudaMemset(out.data(), 0, out.bytes()));
  for (int round = 1; round <= rounds; ++round) {  // each round a new value: old data is stale
    message<version><<<2 * pairs, kThreads>>>(data.data(), flags.data(), round, delay_ns, max_spins, out.data());
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const Outcome o = out.download()[0];
  return {o.stale, o.timed_out, o.unpaired, unsigned(pairs) * rounds};
}

// A fence's cost: each thread stores and fences `count` times.
template <int scope>
__global__ void store_and_fence(int* sink, int count) {
  for (int i = 0; i < count; ++i) {
    sink[blockIdx.x * blockDim.x + threadIdx.x] = i;
    if constexpr (scope == 0) __threadfence_block();
    if constexpr (scope == 1) __threadfence();
    if constexpr (scope == 2) __threadfence_system();
  }
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("05_memory_order", "A flag-and-data message between blocks, right and wrong ways.");
  cli.add_int("rounds", "messages per pair of blocks for each version", 200, 1, 100000);
  cli.add_flag("check-only", "verify, do not time the fences");
  cli.add_flag("correct-only", "run only the two correct versions (for compute-sanitizer)");
  cli.parse_or_exit(argc, argv);
  const int rounds = int(cli.get_int("rounds"));
  const bool broken_too = !cli.get_flag("correct-only");
  const tutorial::DeviceInfo device = tutorial::require_gpu();
  tutorial::Verifier verifier;
  const int pairs = device.sm_count / 2;  // one block an SM: every pair is resident at once

  // The producer sets the flag 50 us after its consumer started waiting; a consumer gives up
  // after 2^24 reads of the flag (seconds: a bound for a broken version, never reached by a right one).
  const long long delay_ns = 50'000, spins = 1ll << 24;
  const Result ra = run<kReleaseAcquire>(pairs, rounds, delay_ns, spins);
  const Result tf = run<kThreadfence>(pairs, rounds, delay_ns, spins);
  const Result nf = broken_too ? run<kNoFence>(pairs, rounds, delay_ns, spins) : Result{};
  const Result pl = broken_too ? run<kPlainLoad>(pairs, rounds, delay_ns, spins) : Result{};

  std::printf("\n%d pairs of blocks, %d-word messages\n\n", pairs, kWords);
  tutorial::Table table({"Version", "Messages", "Stale data", "Timed out"});
  auto row = [&](const char* name, const Result& r) {
    table.add_row({name, std::to_string(r.messages), std::to_string(r.stale), std::to_string(r.timed_out)});
  };
  row("release/acquire (cuda::atomic_ref)", ra);
  row("__threadfence + volatile flag", tf);
  if (broken_too) {
    row("no fence (relaxed flag)", nf);
    row("plain load of the flag", pl);
  }
  table.print();
  std::printf("\n");
  verifier.exact("release/acquire: stale words + time-outs", ra.stale + ra.timed_out);
  verifier.exact("__threadfence: stale words + time-outs", tf.stale + tf.timed_out);
  if (broken_too) {
    // A consumer that starts after its producer gave up waiting for it (as under a tool that runs
    // blocks one at a time) reads the flag already set: only the others must time out.
    verifier.expect("the plain load never sees the flag change (every message to a waiting consumer timed out)",
                    pl.timed_out == pl.messages - pl.unpaired);
    std::printf("No fence: %u stale words in %u messages (a data race: allowed to fail, not bound to)\n",
                nf.stale, nf.messages);
    verifier.figure("no_fence_stale", nf.stale);
    verifier.figure("no_fence_messages", nf.messages);
    verifier.figure("plain_load_timed_out", pl.timed_out);
  }
  std::printf("Consumers not yet running when their producer gave up waiting: %u of %u messages\n",
              ra.unpaired + tf.unpaired + nf.unpaired + pl.unpaired, (broken_too ? 4 : 2) * ra.messages);

  if (!cli.get_flag("check-only")) {
    const int blocks = device.sm_count * 4, threads = 256, count = 1000;
    tutorial::DeviceBuffer<int> sink(size_t(blocks) * threads);
    const double base = tutorial::time_gpu([&] { store_and_fence<-1><<<blocks, threads>>>(sink.data(), count); }).median_ms;
    std::printf("\nWhat a fence costs: %d stores per thread, each followed by a fence\n\n", count);
    tutorial::Table fences({"Fence after each store", "Time", "Per fence (a thread's view)"});
    fences.add_row({"none", tutorial::format_time(base), ""});
    const char* names[] = {"__threadfence_block()", "__threadfence()", "__threadfence_system()"};
    double per_fence[3];
    for (int scope = 0; scope < 3; ++scope) {
      auto launch = [&] {
        if (scope == 0) store_and_fence<0><<<blocks, threads>>>(sink.data(), count);
        if (scope == 1) store_and_fence<1><<<blocks, threads>>>(sink.data(), count);
        if (scope == 2) store_and_fence<2><<<blocks, threads>>>(sink.data(), count);
      };
      const double t = tutorial::time_gpu(launch).median_ms;
      per_fence[scope] = (t - base) * 1e6 / count;
      fences.add_row({names[scope], tutorial::format_time(t), tutorial::format("%.0f ns", per_fence[scope])});
    }
    CUDA_CHECK_LAUNCH();
    fences.print();
    verifier.figure("fence_block_ns", std::round(per_fence[0]));
    verifier.figure("fence_device_ns", std::round(per_fence[1]));
    verifier.figure("fence_system_ns", std::round(per_fence[2]));
  }
  return verifier.finish("05_memory_order");
}
