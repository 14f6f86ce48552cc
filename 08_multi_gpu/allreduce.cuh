/// \file allreduce.cuh
/// \brief An all-reduce of our own over peer memory: out[g] = in[0] + ... + in[n-1] on every GPU g.
///
/// Each GPU's kernel reads and writes the other GPUs' memory directly: through peer access when
/// one process drives every GPU (08_allreduce), through CUDA IPC when each GPU has its own process.
/// The same kernels serve both: they see every GPU's buffers as one Peers struct. Three algorithms:
///  - one-shot LL: each GPU stores its whole input into every peer, each value beside the call's
///    number (its epoch), so the receiver knows a value is fresh by looking at it: no barrier, no
///    fence. NCCL's LL protocol does the same. For the smallest messages;
///  - one-shot: the same push, then a barrier made of flags, then a sum of the staged inputs;
///  - two-stage: reduce-scatter (GPU g sums only its 1/n slice) then all-gather: 2 (n - 1) / n of
///    a buffer crosses NVLink per GPU, the same as NCCL's ring, so it is for large messages.
/// Every wait is bounded: a GPU that gives up writes a Timeout, and the host says who never came.
#pragma once

#include <cuda/atomic>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "multi_gpu.cuh"

namespace allreduce {

constexpr int kMaxGpus = 8;
constexpr int kMaxBlocks = 256;
constexpr int kThreads = 512;
static_assert(kThreads >= kMaxBlocks, "count_call: one block's threads cover every slot");

/// kReduceScatter is two-stage's first half alone: GPU g ends with slice g of the sum in out[g]
/// (slice_of() says where), for an all-gather done otherwise (PeerAllReduce: by the copy engines).
enum class Algorithm { kOneShot, kTwoStage, kOneShotLL, kReduceScatter };
constexpr int kAlgorithms = 4;
inline const char* name(Algorithm algorithm) {
  return algorithm == Algorithm::kOneShot    ? "one-shot"
         : algorithm == Algorithm::kTwoStage ? "two-stage"
         : algorithm == Algorithm::kOneShotLL ? "one-shot LL"
                                              : "reduce-scatter";
}

/// The largest messages the one-shots take: each GPU keeps 2 x (GPUs) slots of their size.
constexpr size_t kOneShotMaxFloats = (4 << 20) / sizeof(float);
constexpr size_t kLLMaxFloats = (1 << 20) / sizeof(float);

/// Every GPU's buffers, as pointers valid on the launching GPU (its own, peer-mapped, or IPC-opened).
struct Peers {
  const float* in[kMaxGpus];
  float* out[kMaxGpus];
  void* workspace[kMaxGpus];
};

/// What a bounded wait that gave up, or a barrier that found another grid, records: one per rank,
/// in mapped host memory, so the host can read it even when the GPUs never got past the wait.
struct Timeout {
  int happened, gpu, block, step, peer;
  int blocks, peer_blocks;  // a grid that did not match: this GPU's and the peer's (else 0)
};

enum Step { kStart = 0, kMiddle = 1, kEnd = 2, kData = 3 };
inline const char* step_name(int step) {
  return step == kStart    ? "start barrier (waiting for the peers' inputs)"
         : step == kMiddle ? "middle barrier (waiting for the reduce-scatter)"
         : step == kEnd    ? "end barrier (waiting for the peers to finish reading)"
                           : "data wait (waiting for the peers' values)";
}

/// The head of each GPU's workspace. The GPU itself counts its calls (in device memory, so a
/// CUDA graph can replay launches); its peers write the barrier flags. Counters and flags are 64
/// bits wide: at a call a microsecond they would wrap after 292,000 years, so "at least this call"
/// (a signed difference) can never mistake a flag left idle for a long time for one from the future.
struct Control {
  /// calls[algorithm][b]: calls so far, as block b counts them; every slot moves in step (see count_call).
  unsigned long long calls[kAlgorithms][kMaxBlocks];
  int timed_out;                   // a block of this GPU gave up; the communicator is dead
  unsigned overtakes;              // barrier waits that found a peer already a call ahead
  /// flag[algorithm][step][block][peer]: the last call at which `peer`'s block reached `step`, shifted
  /// left by kGridBits, with the number of blocks that peer launched in the low bits (see barrier()).
  unsigned long long flag[kAlgorithms][3][kMaxBlocks][kMaxGpus];
};
constexpr int kGridBits = 9;  // kMaxBlocks = 256 needs 9 bits
static_assert(kMaxBlocks < (1 << kGridBits), "a flag's low bits hold the grid size");

/// One 16-byte store of the LL one-shot: two values, each packed with the call's 32-bit line epoch
/// into one 64-bit word (value in the low half, epoch in the high half). The PTX memory model makes an
/// aligned 64-bit access single-copy atomic, so a reader that sees a word's epoch sees that word's
/// value: that is all the protocol relies on. (The whole 16 bytes also travel as one STG.128, as
/// NCCL's LL line does; the words are read and checked one by one all the same.)
struct alignas(16) Line {
  unsigned long long a, b;
};

__host__ __device__ constexpr size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }
__host__ __device__ constexpr size_t staging_offset() { return round_up(sizeof(Control), 256); }
__host__ __device__ constexpr size_t ll_offset(int gpus) {
  return staging_offset() + 2 * gpus * kOneShotMaxFloats * sizeof(float);
}

/// Bytes of the one workspace each GPU owns (flags, counters, staging slots) for `gpus` GPUs.
inline size_t workspace_bytes(int gpus) { return ll_offset(gpus) + 2 * gpus * (kLLMaxFloats / 2) * sizeof(Line); }

/// Makes a freshly allocated workspace ready (zeroes it, enqueued on `stream`): no calls yet,
/// every flag at call 0 and every Line at line epoch 0, which no call uses. Every rank must have
/// done this and synchronized before any rank's first launch.
inline void init_workspace(void* workspace, int gpus, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(workspace, 0, workspace_bytes(gpus), stream));
}

/// The largest n `algorithm` takes for `gpus` GPUs.
inline size_t max_floats(Algorithm algorithm, int /*gpus*/) {
  return algorithm == Algorithm::kOneShot ? kOneShotMaxFloats
         : algorithm == Algorithm::kOneShotLL ? kLLMaxFloats
                                              : size_t(1) << 34;
}

/// Floats [first, second) of the sum that GPU g holds after a reduce-scatter: its float4 slice, and
/// for the last GPU the last n % 4 floats too.
inline std::pair<size_t, size_t> slice_of(int g, int gpus, size_t n) {
  const size_t n4 = n / 4, slice = (n4 + gpus - 1) / gpus;
  const size_t begin = std::min(n4, g * slice) * 4, end = g == gpus - 1 ? n : std::min(n4, (g + 1) * slice) * 4;
  return {begin, end};
}

/// The host message for a wait that gave up, or a grid that did not match.
inline std::string describe(const Timeout& t) {
  if (t.peer_blocks)
    return tutorial::format("GPU %d, block %d refused the call at the %s: GPU %d launched %d blocks where GPU %d "
                            "launched %d (the barriers pair block b with block b, so every GPU must launch the "
                            "same grid).", t.gpu, t.block, step_name(t.step), t.peer, t.peer_blocks, t.gpu, t.blocks);
  return tutorial::format("GPU %d, block %d timed out at the %s: GPU %d never arrived.", t.gpu, t.block,
                          step_name(t.step), t.peer);
}

// [excerpt:pick]
/// Bytes each GPU sends for a message of S bytes on n GPUs, what its links must carry: the LL
/// one-shot pushes every byte to n - 1 peers in lines that are half epoch, the one-shot pushes it once
/// to each, the two-stage sends 1/n of it n - 1 times in each of its two halves.
inline double bytes_sent(Algorithm algorithm, int gpus, double bytes) {
  return algorithm == Algorithm::kOneShotLL ? 2.0 * (gpus - 1) * bytes
         : algorithm == Algorithm::kOneShot ? double(gpus - 1) * bytes
                                            : 2.0 * (gpus - 1) / gpus * bytes;
}

/// One way to all-reduce, modelled as t(S) = alpha + bytes_sent(S) / beta: alpha is what a call
/// costs however small, beta the rate its bytes leave at. Both are measured on this machine, with
/// this many GPUs (calibrate), so the pick follows the GPU count: on two GPUs the one-shot and the
/// two-stage send the same bytes, on four the one-shot sends 1.5 times as many.
struct Candidate {
  std::string name;
  Algorithm model;             // whose bytes_sent it follows (the copy-engine gather: two-stage's)
  size_t small_bytes, large_bytes;  // the two sizes it is timed at
  size_t max_bytes;                 // the largest message it takes
  size_t min_bytes = 0;             // the smallest (the copy-engine gather is timed from 16 MiB up)
  double alpha_us = 0, beta_gbs = 0;
  double predict_us(int gpus, size_t bytes) const {
    return alpha_us + bytes_sent(model, gpus, double(bytes)) / (beta_gbs * 1e3);  // GB/s = 1e3 bytes/us
  }
};

/// Fits each candidate's alpha and beta from its two sizes; time_us(candidate, bytes) times one call.
template <typename TimeUs>
void calibrate(std::vector<Candidate>& candidates, int gpus, TimeUs&& time_us) {
  for (Candidate& c : candidates) {
    const double t_small = time_us(c, c.small_bytes), t_large = time_us(c, c.large_bytes);
    const double b_small = bytes_sent(c.model, gpus, double(c.small_bytes));
    const double us_per_byte = std::max(1e-9, (t_large - t_small) / (bytes_sent(c.model, gpus, double(c.large_bytes)) - b_small));
    c.beta_gbs = 1e-3 / us_per_byte;
    c.alpha_us = std::max(0.0, t_small - b_small * us_per_byte);
  }
}

/// The candidate the model predicts fastest for a message of \p bytes (among those that take it).
inline size_t pick(const std::vector<Candidate>& candidates, int gpus, size_t bytes) {
  size_t best = SIZE_MAX;
  for (size_t k = 0; k < candidates.size(); ++k)
    if (bytes <= candidates[k].max_bytes && bytes >= candidates[k].min_bytes &&
        (best == SIZE_MAX || candidates[k].predict_us(gpus, bytes) < candidates[best].predict_us(gpus, bytes)))
      best = k;
  return best;
}
// [/excerpt:pick]

/// Our three kernels as candidates, each timed at 4 KiB and at the largest message it takes, at most
/// 64 MiB and at most \p largest_bytes (the program's buffers).
inline std::vector<Candidate> kernel_candidates(int gpus, size_t largest_bytes) {
  std::vector<Candidate> candidates;
  for (Algorithm a : {Algorithm::kOneShotLL, Algorithm::kOneShot, Algorithm::kTwoStage}) {
    const size_t max_bytes = max_floats(a, gpus) * sizeof(float);
    const size_t large = std::min({max_bytes, largest_bytes, size_t(64) << 20});
    if (large > (4u << 10)) candidates.push_back({name(a), a, 4u << 10, large, max_bytes});
  }
  return candidates;
}

// ---------------------------------------------------------------------------------------------
// Device side.

__device__ inline Control* control(void* workspace) { return static_cast<Control*>(workspace); }

/// The running call's number: calls so far, plus one. Each block reads its own slot, so no block
/// waits for another and no atomic is needed; count_call() keeps every slot equal.
__device__ inline unsigned long long begin_call(const Control* me, Algorithm algorithm) {
  return *reinterpret_cast<const volatile unsigned long long*>(&me->calls[int(algorithm)][blockIdx.x]) + 1;
}
/// Once every thread of the block has read the epoch: block b writes it into slot b and into the slots
/// of blocks this grid does not have (b + grid, b + 2 grid, ...; one per thread), so a later call with
/// more blocks finds every slot at the same count. Only block b touches those slots in this call, and
/// the next kernel on the stream starts after this one ends.
__device__ inline void count_call(Control* me, Algorithm algorithm, unsigned long long epoch) {
  const unsigned b = blockIdx.x + threadIdx.x * gridDim.x;
  if (b < kMaxBlocks) me->calls[int(algorithm)][b] = epoch;
}
__device__ inline bool is_dead(const Control* me) { return *reinterpret_cast<const volatile int*>(&me->timed_out); }
/// One block-wide vote: every thread has read the epoch before count_call writes the next one, and
/// all agree whether a wait of this GPU gave up earlier (then the call does nothing, never waits).
__device__ inline bool start_call(Control* me, Algorithm algorithm, unsigned long long epoch) {
  if (__syncthreads_or(is_dead(me))) return false;
  count_call(me, algorithm, epoch);
  return true;
}

/// The first block of this GPU to give up fills in *timeout (plain stores, then `happened`
/// last, so the host never reads a half-written record; no atomics on host memory). From then on
/// the communicator is dead: every later call of this GPU poisons its output and returns.
__device__ inline void record_failure(Control* me, Timeout* timeout, int rank, int step, int peer,
                                      int peer_blocks = 0) {
  if (atomicCAS(&me->timed_out, 0, 1) != 0) return;
  timeout->gpu = rank;
  timeout->block = blockIdx.x;
  timeout->step = step;
  timeout->peer = peer;
  timeout->blocks = gridDim.x;
  timeout->peer_blocks = peer_blocks;
  __threadfence_system();
  *reinterpret_cast<volatile int*>(&timeout->happened) = 1;
  __threadfence_system();
}

/// What every kernel gets besides the buffers.
struct Call {
  int rank;
  size_t n;
  Timeout* timeout;
  unsigned long long timeout_ns;
  unsigned long long pause_ns;  // test only: see barrier()
};

using multi_gpu::sleep_ns;  // barrier()'s test pause; fault_test.cu calls it as allreduce::sleep_ns

__device__ inline size_t first_index() { return size_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline size_t grid_stride() { return size_t(gridDim.x) * blockDim.x; }

/// After a failure an output element holds either the exact sum or NaN, never a stale value: a
/// block that gives up writes NaN wherever it would have written a sum, and every call on a dead
/// communicator writes NaN over the whole output.
__device__ inline void poison_all(float* out, size_t n) {
  for (size_t i = first_index(); i < n; i += grid_stride()) out[i] = NAN;
}

// [excerpt:barrier]
/// Block-wide barrier across GPUs: thread p < kGpus tells GPU p "this block of GPU `rank`
/// reached `step` of call `epoch`" and waits until GPU p said the same. The store is a
/// release and the load an acquire, both at system scope (across GPUs): whatever this block
/// wrote before the barrier is visible to every peer that passes it. A peer may already be one
/// call ahead and have written a later call over the flag, so the wait is for "this call or later"
/// (a signed difference of 64-bit counters, which never wrap). The flag also carries how many
/// blocks the peer launched: block b pairs with block b only if both GPUs cut the work the same way,
/// so a different grid is refused, never summed. The wait gives up after timeout_ns and says so,
/// rather than hanging forever when a peer never comes.
template <int kGpus>
__device__ bool barrier(const Peers& peers, Algorithm algorithm, int step, unsigned long long epoch, const Call& call) {
  __syncthreads();  // the block's earlier reads and writes are done
  bool ok = true;
  if (threadIdx.x < kGpus) {
    const int peer = threadIdx.x, a = int(algorithm);
    unsigned long long& theirs = control(peers.workspace[peer])->flag[a][step][blockIdx.x][call.rank];
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(theirs).store(
        epoch << kGridBits | gridDim.x, cuda::memory_order_release);
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> mine(
        control(peers.workspace[call.rank])->flag[a][step][blockIdx.x][peer]);
    if (call.pause_ns && step == kStart) sleep_ns(call.pause_ns);  // test only: a peer may overtake us here
    const unsigned long long begin = multi_gpu::globaltimer_ns();
    for (;;) {
      const unsigned long long seen = mine.load(cuda::memory_order_acquire);
      const long long ahead = (long long)((seen >> kGridBits) - epoch);
      const int peer_blocks = int(seen & ((1u << kGridBits) - 1));
      if (ahead > 0) {  // the peer passed this barrier already, so it saw our grid and agreed
        atomicAdd(&control(peers.workspace[call.rank])->overtakes, 1u);
        break;
      }
      if (ahead == 0) {
        if (peer_blocks != int(gridDim.x)) {
          record_failure(control(peers.workspace[call.rank]), call.timeout, call.rank, step, peer, peer_blocks);
          ok = false;
        }
        break;
      }
      if (multi_gpu::globaltimer_ns() - begin > call.timeout_ns) {
        record_failure(control(peers.workspace[call.rank]), call.timeout, call.rank, step, peer);
        ok = false;
        break;
      }
    }
  }
  return !__syncthreads_or(!ok);  // every thread learns whether all waits succeeded
}
// [/excerpt:barrier]

// [excerpt:one-shot]
/// One-shot: every GPU writes its input straight into a slot of every GPU's staging buffer
/// (stores across NVLink do not wait for an answer), then one barrier, whose release makes
/// those stores visible before the flag; then each GPU sums the n slots in its own memory, in
/// the same order (GPU 0 first) everywhere, so all GPUs hold the same bits. Two sets of slots,
/// used by odd and even calls: a GPU can be one call ahead of a peer, never two (it waits for
/// every peer's flag in each call), so it never overwrites a slot that a peer still reads.
template <int kGpus>
__device__ void one_shot_body(const Peers& peers, const Call& call, unsigned long long epoch) {
  const int rank = call.rank;
  const size_t n = call.n, n4 = n / 4;
  float* out = peers.out[rank];
  auto slot = [&](int gpu, int from) {
    return reinterpret_cast<float*>(static_cast<char*>(peers.workspace[gpu]) + staging_offset()) +
           ((epoch & 1) * kGpus + from) * kOneShotMaxFloats;
  };
  const bool tail = blockIdx.x == 0 && threadIdx.x < n - n4 * 4;  // the last n % 4 floats: block 0's
  // [excerpt:push]
  for (size_t i = first_index(); i < n4; i += grid_stride()) {
    const float4 v = reinterpret_cast<const float4*>(peers.in[rank])[i];
#pragma unroll
    for (int p = 0; p < kGpus; ++p) reinterpret_cast<float4*>(slot(p, rank))[i] = v;
  }
  if (tail)
    for (int p = 0; p < kGpus; ++p) slot(p, rank)[n4 * 4 + threadIdx.x] = peers.in[rank][n4 * 4 + threadIdx.x];
  if (!barrier<kGpus>(peers, Algorithm::kOneShot, kStart, epoch, call)) {
    for (size_t i = first_index(); i < n4; i += grid_stride()) reinterpret_cast<float4*>(out)[i] = {NAN, NAN, NAN, NAN};
    if (tail) out[n4 * 4 + threadIdx.x] = NAN;
    return;
  }
  // [/excerpt:push]
  for (size_t i = first_index(); i < n4; i += grid_stride()) {
    float4 sum = reinterpret_cast<const float4*>(slot(rank, 0))[i];
#pragma unroll
    for (int p = 1; p < kGpus; ++p) {
      const float4 v = reinterpret_cast<const float4*>(slot(rank, p))[i];
      sum = {sum.x + v.x, sum.y + v.y, sum.z + v.z, sum.w + v.w};
    }
    reinterpret_cast<float4*>(out)[i] = sum;
  }
  if (tail) {
    const size_t i = n4 * 4 + threadIdx.x;
    float sum = slot(rank, 0)[i];
    for (int p = 1; p < kGpus; ++p) sum += slot(rank, p)[i];
    out[i] = sum;
  }
}
// [/excerpt:one-shot]

// [excerpt:two-stage]
/// Two-stage: reduce-scatter, then all-gather. GPU g owns float4 slice g, and the last GPU also
/// the last n % 4 floats; block b handles the same indices of every slice on every GPU, so block
/// b's barrier covers exactly its data. Each GPU writes only its own slice of its output before
/// the middle barrier, and reads a peer's input only there, so in == out is safe.
template <int kGpus, Algorithm kAlgorithm = Algorithm::kTwoStage>
__device__ void two_stage_body(const Peers& peers, const Call& call, unsigned long long epoch) {
  const int rank = call.rank;
  const size_t n = call.n, n4 = n / 4, slice = (n4 + kGpus - 1) / kGpus, tail = n4 * 4;
  float* out = peers.out[rank];
  const bool tail_here = blockIdx.x == 0 && threadIdx.x < n - tail;
  auto give_up = [&] {  // NaN wherever this block would have written a sum
    for (int k = 0; k < kGpus; ++k)
      for (size_t j = first_index(); j < slice && k * slice + j < n4; j += grid_stride())
        reinterpret_cast<float4*>(out)[k * slice + j] = {NAN, NAN, NAN, NAN};
    if (tail_here) out[tail + threadIdx.x] = NAN;
  };
  if (!barrier<kGpus>(peers, kAlgorithm, kStart, epoch, call)) return give_up();
  // 1. Reduce-scatter: sum slice `rank` of every input into slice `rank` of my output.
  const size_t mine = rank * slice;
  for (size_t j = first_index(); j < slice && mine + j < n4; j += grid_stride()) {
    float4 v[kGpus];
#pragma unroll
    for (int p = 0; p < kGpus; ++p) v[p] = reinterpret_cast<const float4*>(peers.in[p])[mine + j];
    float4 sum = v[0];
#pragma unroll
    for (int p = 1; p < kGpus; ++p) sum = {sum.x + v[p].x, sum.y + v[p].y, sum.z + v[p].z, sum.w + v[p].w};
    reinterpret_cast<float4*>(out)[mine + j] = sum;
  }
  if (rank == kGpus - 1 && tail_here) {  // the last n % 4 floats
    float sum = peers.in[0][tail + threadIdx.x];
    for (int p = 1; p < kGpus; ++p) sum += peers.in[p][tail + threadIdx.x];
    out[tail + threadIdx.x] = sum;
  }
  if (!barrier<kGpus>(peers, kAlgorithm, kMiddle, epoch, call)) return give_up();
  if (kAlgorithm == Algorithm::kTwoStage) {  // (a reduce-scatter alone stops here: every peer has read my input)
    // 2. All-gather: copy every other GPU's finished slice from its output into mine.
    for (size_t j = first_index(); j < slice; j += grid_stride()) {
      float4 v[kGpus];
#pragma unroll
      for (int k = 1; k < kGpus; ++k) {  // start with the next GPU, so the GPUs spread their reads
        const size_t i = ((rank + k) % kGpus) * slice + j;
        if (i < n4) v[k] = reinterpret_cast<const float4*>(peers.out[(rank + k) % kGpus])[i];
      }
#pragma unroll
      for (int k = 1; k < kGpus; ++k) {
        const size_t i = ((rank + k) % kGpus) * slice + j;
        if (i < n4) reinterpret_cast<float4*>(out)[i] = v[k];
      }
    }
    if (rank != kGpus - 1 && tail_here) out[tail + threadIdx.x] = peers.out[kGpus - 1][tail + threadIdx.x];
    // Peers finished reading my slice. My output is complete and exact even if this wait gives up.
    barrier<kGpus>(peers, Algorithm::kTwoStage, kEnd, epoch, call);
  }
}
// [/excerpt:two-stage]

// [excerpt:ll]
/// A value and the line epoch in one 64-bit word: the epoch in the high half.
__device__ inline unsigned long long pack(float value, unsigned line_epoch) {
  return (unsigned long long)line_epoch << 32 | __float_as_uint(value);
}
__device__ inline void store_line(Line* to, float a, float b, unsigned line_epoch) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(to), "l"(pack(a, line_epoch)),
               "l"(pack(b, line_epoch)) : "memory");
}
__device__ inline Line load_line(const Line* from) {
  Line line;
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(line.a), "=l"(line.b) : "l"(from) : "memory");
  return line;
}
__device__ inline unsigned epoch_of(unsigned long long word) { return unsigned(word >> 32); }
__device__ inline float value_of(unsigned long long word) { return __uint_as_float(unsigned(word)); }

/// The 32-bit epoch a call writes beside its values: 1 .. 2^32 - 1, never 0, the value of a fresh
/// workspace. It repeats every 2^32 - 1 calls, so a line left from that many calls ago could pass for
/// fresh. No line lives that long: every kLLRefreshCalls calls, a call of each parity pushes every line
/// of its set, not only the message's.
constexpr unsigned long long kLLRefreshCalls = 1ull << 30;
__device__ inline unsigned line_epoch(unsigned long long epoch) { return unsigned(epoch % 0xFFFFFFFFull) + 1; }

/// One-shot LL: line j (floats 2j and 2j+1) of GPU `rank`'s input goes to every peer as one
/// 16-byte store, each value beside the epoch; each GPU then polls its own memory until every peer's
/// line j carries this call's epoch, and sums. No barrier and no fence: the epoch in the word *is* the
/// flag. Two sets of lines, used by odd and even calls: to finish call k + 1 a GPU needs every
/// peer's call k + 1 data, which a peer sends only after finishing call k, so a GPU in call k + 2
/// never overwrites lines that a peer still reads for call k. A dead GPU pushes nothing: a peer that
/// was only slow must time out, not sum lines this GPU never finished.
template <int kGpus>
__device__ void one_shot_ll_body(const Peers& peers, const Call& call, unsigned long long epoch, Control* me) {
  const int rank = call.rank;
  const size_t n = call.n, lines = (n + 1) / 2;
  float* out = peers.out[rank];
  auto slot = [&](int gpu, int from) {
    return reinterpret_cast<Line*>(static_cast<char*>(peers.workspace[gpu]) + ll_offset(kGpus)) +
           ((epoch & 1) * kGpus + from) * (kLLMaxFloats / 2);
  };
  auto mine = [&](size_t j) {  // an odd n's last line carries a 0 beside its last value
    return 2 * j + 1 < n ? reinterpret_cast<const float2*>(peers.in[rank])[j] : float2{peers.in[rank][2 * j], 0.0f};
  };
  if (is_dead(me)) return poison_all(out, n);  // read beside the epoch: both loads leave together
  const unsigned e = line_epoch(epoch);
  const size_t pushed = (epoch - 1) % kLLRefreshCalls < 2 ? kLLMaxFloats / 2 : lines;  // see line_epoch
  // [excerpt:ll-push]
  for (size_t j = first_index(); j < pushed; j += grid_stride()) {  // line j: floats 2j, 2j + 1
    const float2 v = j < lines ? mine(j) : float2{0.0f, 0.0f};
    for (int p = 0; p < kGpus; ++p)
      if (p != rank) store_line(slot(p, rank) + j, v.x, v.y, e);  // {a | e, b | e}
  }
  // [/excerpt:ll-push]
  auto give_up = [&](size_t from) {  // NaN wherever this thread would still have written a sum
    for (size_t j = from; j < lines; j += grid_stride()) {
      out[2 * j] = NAN;
      if (2 * j + 1 < n) out[2 * j + 1] = NAN;
    }
  };
  // Voted only now: the stores need nothing but the epoch, so they leave while the block agrees.
  if (!start_call(me, Algorithm::kOneShotLL, epoch)) return give_up(first_index());
  const unsigned long long begin = multi_gpu::globaltimer_ns();
  for (size_t j = first_index(); j < lines; j += grid_stride()) {
    float2 v[kGpus];
#pragma unroll
    for (int p = 0; p < kGpus; ++p) {
      if (p == rank) {
        v[p] = mine(j);
        continue;
      }
      // [excerpt:ll-poll]
      Line line = load_line(slot(rank, p) + j);  // my own memory, where peer p stored
      while (epoch_of(line.a) != e || epoch_of(line.b) != e) {  // not this call's yet
        if (multi_gpu::globaltimer_ns() - begin > call.timeout_ns) {
          record_failure(me, call.timeout, rank, kData, p);
          return give_up(j);
        }
        line = load_line(slot(rank, p) + j);
      }
      // [/excerpt:ll-poll]
      v[p] = {value_of(line.a), value_of(line.b)};
    }
    float2 sum = v[0];  // GPU 0 first on every GPU: the same bits everywhere
#pragma unroll
    for (int p = 1; p < kGpus; ++p) sum = {sum.x + v[p].x, sum.y + v[p].y};
    if (2 * j + 1 < n) reinterpret_cast<float2*>(out)[j] = sum;
    else out[2 * j] = sum.x;
  }
}
// [/excerpt:ll]

template <int kGpus, Algorithm kAlgorithm>
__global__ void __launch_bounds__(kThreads) all_reduce(Peers peers, Call call) {
  Control* me = control(peers.workspace[call.rank]);
  const unsigned long long epoch = begin_call(me, kAlgorithm);
  if (kAlgorithm == Algorithm::kOneShotLL) return one_shot_ll_body<kGpus>(peers, call, epoch, me);  // votes itself
  if (!start_call(me, kAlgorithm, epoch)) return poison_all(peers.out[call.rank], call.n);  // dead: NaN, no wait
  if (kAlgorithm == Algorithm::kOneShot) one_shot_body<kGpus>(peers, call, epoch);
  else if (kAlgorithm == Algorithm::kTwoStage) two_stage_body<kGpus>(peers, call, epoch);
  else two_stage_body<kGpus, Algorithm::kReduceScatter>(peers, call, epoch);
}

// ---------------------------------------------------------------------------------------------
// Host side.

/// Blocks per call: enough for the work, at most one per SM, so that every block of a call is
/// running at once (a block that waits for a peer's block must not keep it from being scheduled).
/// A function of the call alone, so that every rank launches the same grid.
inline int blocks_for(Algorithm algorithm, int gpus, size_t n, int max_blocks) {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const size_t work = algorithm == Algorithm::kOneShotLL ? (n + 1) / 2
                      : algorithm == Algorithm::kOneShot ? n / 4
                                                         : (n / 4 + gpus - 1) / gpus;
  const size_t cap = std::min<size_t>({size_t(sms), size_t(kMaxBlocks), max_blocks > 0 ? size_t(max_blocks) : SIZE_MAX});
  return int(std::max<size_t>(1, std::min<size_t>((work + kThreads - 1) / kThreads, cap)));
}

[[noreturn]] inline void refuse(const std::string& why, int code = tutorial::kExitUsage) {
  std::fprintf(stderr, "all-reduce: %s\n", why.c_str());
  std::exit(code);
}

template <int kGpus>
void launch_for(Algorithm algorithm, const Peers& peers, const Call& call, int blocks, cudaStream_t stream) {
  if (algorithm == Algorithm::kOneShot)
    all_reduce<kGpus, Algorithm::kOneShot><<<blocks, kThreads, 0, stream>>>(peers, call);
  else if (algorithm == Algorithm::kTwoStage)
    all_reduce<kGpus, Algorithm::kTwoStage><<<blocks, kThreads, 0, stream>>>(peers, call);
  else if (algorithm == Algorithm::kOneShotLL)
    all_reduce<kGpus, Algorithm::kOneShotLL><<<blocks, kThreads, 0, stream>>>(peers, call);
  else
    all_reduce<kGpus, Algorithm::kReduceScatter><<<blocks, kThreads, 0, stream>>>(peers, call);
  CUDA_CHECK_LAUNCH();
}

/// Enqueues GPU `rank`'s part of one all-reduce of n floats on `stream` (the current device must
/// be that GPU). Every rank makes the same sequence of calls (same algorithm and n); the epoch
/// lives in device memory, so a CUDA graph can capture and replay launches. In place (in == out)
/// is allowed. Refuses (message, exit 2) what the kernels cannot do; refuses (exit 1) to run
/// after a wait gave up. max_blocks > 0 caps the blocks per call (an experiment: fewer SMs for large
/// messages, as NCCL's 24 channels; every rank must pass the same). pause_ns is for tests only: this
/// rank's waiting threads sleep that long
/// between their own flag store and their first load (the window where a peer can overtake).
inline void launch(Algorithm algorithm, const Peers& peers, int rank, int gpus, size_t n, cudaStream_t stream,
                   Timeout* timeout, unsigned long long timeout_ns, unsigned long long pause_ns = 0,
                   int max_blocks = 0) {
  if (gpus < 2 || gpus > kMaxGpus)
    refuse(tutorial::format("built for 2 to %d GPUs, asked for %d", kMaxGpus, gpus));
  if (rank < 0 || rank >= gpus) refuse(tutorial::format("rank %d is not one of the %d GPUs", rank, gpus));
  if (n > max_floats(algorithm, gpus))
    refuse(tutorial::format("%s takes at most %zu floats, not %zu", name(algorithm), max_floats(algorithm, gpus), n));
  for (int g = 0; g < gpus; ++g)
    if (reinterpret_cast<uintptr_t>(peers.in[g]) % 16 || reinterpret_cast<uintptr_t>(peers.out[g]) % 16 ||
        reinterpret_cast<uintptr_t>(peers.workspace[g]) % 256)
      refuse(tutorial::format("GPU %d's buffers must be 16-byte aligned (the kernels move float4s); "
                              "in = %p, out = %p", g, static_cast<const void*>(peers.in[g]),
                              static_cast<void*>(peers.out[g])));
  if (timeout->happened)
    refuse("this communicator is dead: " + describe(*timeout) + " Refusing further calls; make a new one.",
           tutorial::kExitFailure);
  if (n == 0) return;
  const Call call{rank, n, timeout, timeout_ns, pause_ns};
  const int blocks = blocks_for(algorithm, gpus, n, max_blocks);
  switch (gpus) {  // the GPU count is a template argument: the loops over peers unroll
    case 2: return launch_for<2>(algorithm, peers, call, blocks, stream);
    case 3: return launch_for<3>(algorithm, peers, call, blocks, stream);
    case 4: return launch_for<4>(algorithm, peers, call, blocks, stream);
    case 5: return launch_for<5>(algorithm, peers, call, blocks, stream);
    case 6: return launch_for<6>(algorithm, peers, call, blocks, stream);
    case 7: return launch_for<7>(algorithm, peers, call, blocks, stream);
    case 8: return launch_for<8>(algorithm, peers, call, blocks, stream);
  }
}

/// One process, every GPU: a workspace on each, a Timeout per GPU, a launch on every GPU's stream.
class PeerAllReduce {
 public:
  /// Needs peer access enabled between all \p gpus (multi_gpu::enable_all_peers).
  explicit PeerAllReduce(int gpus, unsigned long long timeout_ns = 5'000'000'000ull)
      : gpus_(gpus), timeout_ns_(timeout_ns) {
    if (gpus < 2 || gpus > kMaxGpus) refuse(tutorial::format("built for 2 to %d GPUs; this machine has %d", kMaxGpus, gpus));
    for (int d = 0; d < gpus; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaMalloc(&workspace_[d], workspace_bytes(gpus)));
      init_workspace(workspace_[d], gpus, nullptr);
      int sms = 0;
      CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
      fewest_sms_ = d == 0 ? sms : std::min(fewest_sms_, sms);  // every GPU launches the same grid
    }
    for (int d = 0; d < gpus; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaEventCreateWithFlags(&scattered_[d], cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreateWithFlags(&gathered_[d], cudaEventDisableTiming));
    }
    CUDA_CHECK(cudaHostAlloc(&timeouts_, kMaxGpus * sizeof(Timeout), cudaHostAllocMapped | cudaHostAllocPortable));
    for (int d = 0; d < kMaxGpus; ++d) timeouts_[d] = Timeout{};
    multi_gpu::synchronize_all(gpus);
  }
  ~PeerAllReduce() {
    for (int d = 0; d < gpus_; ++d)
      if (cudaSetDevice(d) == cudaSuccess) {
        cudaFree(workspace_[d]);
        cudaEventDestroy(scattered_[d]);
        cudaEventDestroy(gathered_[d]);
      }
    cudaFreeHost(timeouts_);
  }
  PeerAllReduce(const PeerAllReduce&) = delete;
  PeerAllReduce& operator=(const PeerAllReduce&) = delete;

  /// Enqueues out[g] = sum of in[*] on every GPU g's stream. Only \p only_gpus GPUs launch (all
  /// by default): fewer is how the timeout test makes a peer that never comes. \p pause_gpu's
  /// waits pause for \p pause_ns (tests only; see launch()).
  void run(Algorithm algorithm, const std::vector<float*>& in, const std::vector<float*>& out, size_t n,
           const std::vector<cudaStream_t>& streams, int only_gpus = -1, int pause_gpu = -1,
           unsigned long long pause_ns = 0) {
    launch_all(algorithm, in, out, n, streams, only_gpus, pause_gpu, pause_ns, max_blocks_ ? max_blocks_ : fewest_sms_);
  }

  // [excerpt:copy-engine-gather]
  /// Two-stage with the copy engines doing the all-gather: our kernel reduce-scatters (on 64 blocks,
  /// the count measured; 24 ran at half the speed), then each GPU's copy engine pushes its finished
  /// slice into every peer's output. Events order the streams: a GPU pushes into peer p once p has
  /// finished its own reduce-scatter (so p's earlier work on that output is done too), and p's
  /// stream goes on only when every peer's push into it has landed.
  void run_copy_engine_gather(const std::vector<float*>& in, const std::vector<float*>& out, size_t n,
                              const std::vector<cudaStream_t>& streams) {
    launch_all(Algorithm::kReduceScatter, in, out, n, streams, -1, -1, 0, max_blocks_ ? max_blocks_ : 64);
    for (int d = 0; d < gpus_; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaEventRecord(scattered_[d], streams[d]));
    }
    for (int d = 0; d < gpus_; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      const auto [begin, end] = slice_of(d, gpus_, n);
      for (int p = 0; p < gpus_; ++p) {
        if (p == d || begin == end) continue;
        CUDA_CHECK(cudaStreamWaitEvent(streams[d], scattered_[p], 0));
        CUDA_CHECK(cudaMemcpyPeerAsync(out[p] + begin, p, out[d] + begin, d, (end - begin) * sizeof(float), streams[d]));
      }
      CUDA_CHECK(cudaEventRecord(gathered_[d], streams[d]));
    }
    for (int d = 0; d < gpus_; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      for (int p = 0; p < gpus_; ++p)
        if (p != d) CUDA_CHECK(cudaStreamWaitEvent(streams[d], gathered_[p], 0));
    }
  }
  // [/excerpt:copy-engine-gather]

  /// After synchronizing: if a wait gave up, says which GPU, block and step (each GPU that gave
  /// up), and returns false.
  bool report_timeout() const {
    bool ok = true;
    for (int d = 0; d < gpus_; ++d)
      if (timeouts_[d].happened) {
        std::fprintf(stderr, "all-reduce: %s\n", describe(timeouts_[d]).c_str());
        ok = false;
      }
    return ok;
  }
  const Timeout& timeout(int gpu) const { return timeouts_[gpu]; }
  /// Caps the blocks of every later call (0: one per SM); see launch().
  void set_max_blocks(int blocks) { max_blocks_ = blocks; }
  /// How many of \p gpu's barrier waits found a peer already a call ahead (tests read it).
  unsigned overtakes(int gpu) const {
    Control control{};
    CUDA_CHECK(cudaMemcpy(&control, workspace_[gpu], sizeof control, cudaMemcpyDeviceToHost));
    return control.overtakes;
  }

 private:
  void launch_all(Algorithm algorithm, const std::vector<float*>& in, const std::vector<float*>& out, size_t n,
                  const std::vector<cudaStream_t>& streams, int only_gpus, int pause_gpu,
                  unsigned long long pause_ns, int max_blocks) {
    for (int d = 0; d < gpus_; ++d)
      if (timeouts_[d].happened)
        refuse("this communicator is dead: " + describe(timeouts_[d]) + " Refusing further calls.",
               tutorial::kExitFailure);
    Peers peers{};
    for (int d = 0; d < gpus_; ++d) {
      peers.in[d] = in[d];
      peers.out[d] = out[d];
      peers.workspace[d] = workspace_[d];
    }
    for (int d = 0; d < (only_gpus < 0 ? gpus_ : only_gpus); ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      launch(algorithm, peers, d, gpus_, n, streams[d], &timeouts_[d], timeout_ns_, d == pause_gpu ? pause_ns : 0,
             max_blocks);
    }
  }

  int gpus_;
  unsigned long long timeout_ns_;
  void* workspace_[kMaxGpus] = {};
  cudaEvent_t scattered_[kMaxGpus] = {}, gathered_[kMaxGpus] = {};  // run_copy_engine_gather's
  Timeout* timeouts_ = nullptr;
  int max_blocks_ = 0;
  int fewest_sms_ = 0;  // the grid's cap when max_blocks_ is 0: one block per SM of the smallest GPU
};

}  // namespace allreduce
