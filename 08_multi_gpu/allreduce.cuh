/// \file allreduce.cuh
/// \brief An all-reduce of our own over peer memory: out[g] = in[0] + ... + in[n-1] on every GPU g.
///
/// One process drives every GPU, so each GPU's kernel can read every other GPU's buffers
/// directly (peer access, chapter 08 part 1). Two algorithms:
///  - one-shot: each GPU sends its whole input to every other GPU and sums what it receives.
///    One step, the least latency; but each GPU sends (n - 1) whole buffers over NVLink, so it
///    is for small messages;
///  - two-stage: reduce-scatter (GPU g sums only its 1/n slice) then all-gather (GPU g copies
///    the other slices from the GPUs that own them): 2 (n - 1) / n of a buffer crosses
///    NVLink per GPU, the same as NCCL's ring, so it is for large messages.
/// GPUs meet at barriers made of flags: block b of GPU g writes an epoch number into a flag
/// on every peer, then waits until every peer's block b has written it into g's flag.
#pragma once

#include <cuda/atomic>

#include <cstdio>
#include <string>
#include <vector>

#include "multi_gpu.cuh"

namespace allreduce {

constexpr int kMaxGpus = 8;
constexpr int kMaxBlocks = 256;
constexpr int kThreads = 512;
/// The largest message one-shot takes: each GPU keeps 2 x (GPUs) slots of this size.
constexpr size_t kOneShotMaxFloats = (4 << 20) / sizeof(float);

enum Step { kStart = 0, kMiddle = 1, kEnd = 2 };
inline const char* step_name(int step) {
  return step == kStart ? "start barrier (waiting for the peers' inputs)"
         : step == kMiddle ? "middle barrier (waiting for the reduce-scatter)"
                           : "end barrier (waiting for the peers to finish reading)";
}

/// Lives in each GPU's memory; written by the peers. flag[step][block][peer] holds the epoch
/// (the call's number) at which `peer`'s block `block` last reached `step`.
struct Flags {
  unsigned flag[3][kMaxBlocks][kMaxGpus];
};

/// Where a wait that gave up says who it was. In mapped host memory, so the host can read it
/// even when the GPUs never got past the barrier.
struct Timeout {
  int happened, gpu, block, step, peer;
};

/// Every GPU's pointers, passed by value to every kernel.
struct Peers {
  const float* in[kMaxGpus];
  float* out[kMaxGpus];
  Flags* flags[kMaxGpus];
  float* staging[kMaxGpus];  // one-shot's slots: [2][GPUs][kOneShotMaxFloats] on each GPU
};

// [excerpt:barrier]
/// Block-wide barrier across GPUs: thread p < kGpus tells GPU p "this block of GPU `rank`
/// reached `step` of call `epoch`" and waits until GPU p said the same. The store is a
/// release and the load an acquire, both at system scope (across GPUs): whatever this block
/// wrote before the barrier is visible to every peer that passes it. The wait gives up after
/// timeout_ns and says so, rather than hanging forever when a peer never comes.
template <int kGpus>
__device__ bool barrier(const Peers& peers, int rank, int step, unsigned epoch, Timeout* timeout,
                        unsigned long long timeout_ns) {
  __syncthreads();  // the block's earlier reads and writes are done
  bool ok = true;
  if (threadIdx.x < kGpus) {
    const int peer = threadIdx.x;
    unsigned& theirs = peers.flags[peer]->flag[step][blockIdx.x][rank];
    cuda::atomic_ref<unsigned, cuda::thread_scope_system>(theirs).store(epoch, cuda::memory_order_release);
    cuda::atomic_ref<unsigned, cuda::thread_scope_system> mine(peers.flags[rank]->flag[step][blockIdx.x][peer]);
    const unsigned long long begin = multi_gpu::globaltimer_ns();
    while (mine.load(cuda::memory_order_acquire) != epoch) {
      if (multi_gpu::globaltimer_ns() - begin > timeout_ns) {
        if (atomicCAS_system(&timeout->happened, 0, 1) == 0) {
          timeout->gpu = rank;
          timeout->block = blockIdx.x;
          timeout->step = step;
          timeout->peer = peer;
          __threadfence_system();
        }
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
__global__ void __launch_bounds__(kThreads) one_shot(Peers peers, int rank, size_t n, unsigned epoch,
                                                     Timeout* timeout, unsigned long long timeout_ns) {
  auto slot = [&](int gpu, int from) { return peers.staging[gpu] + ((epoch & 1) * kGpus + from) * kOneShotMaxFloats; };
  const size_t n4 = n / 4;
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x, stride = size_t(gridDim.x) * blockDim.x;
  // [excerpt:push]
  for (size_t i = first; i < n4; i += stride) {
    const float4 v = reinterpret_cast<const float4*>(peers.in[rank])[i];
#pragma unroll
    for (int p = 0; p < kGpus; ++p) reinterpret_cast<float4*>(slot(p, rank))[i] = v;
  }
  if (blockIdx.x == 0 && threadIdx.x < n - n4 * 4)  // the last n % 4 floats
    for (int p = 0; p < kGpus; ++p) slot(p, rank)[n4 * 4 + threadIdx.x] = peers.in[rank][n4 * 4 + threadIdx.x];
  if (!barrier<kGpus>(peers, rank, kStart, epoch, timeout, timeout_ns)) return;
  // [/excerpt:push]
  for (size_t i = first; i < n4; i += stride) {
    float4 sum = reinterpret_cast<const float4*>(slot(rank, 0))[i];
#pragma unroll
    for (int p = 1; p < kGpus; ++p) {
      const float4 v = reinterpret_cast<const float4*>(slot(rank, p))[i];
      sum = {sum.x + v.x, sum.y + v.y, sum.z + v.z, sum.w + v.w};
    }
    reinterpret_cast<float4*>(peers.out[rank])[i] = sum;
  }
  if (blockIdx.x == 0 && threadIdx.x < n - n4 * 4) {
    const size_t i = n4 * 4 + threadIdx.x;
    float sum = slot(rank, 0)[i];
    for (int p = 1; p < kGpus; ++p) sum += slot(rank, p)[i];
    peers.out[rank][i] = sum;
  }
}
// [/excerpt:one-shot]

// [excerpt:two-stage]
/// Two-stage: reduce-scatter, then all-gather. GPU g owns float4 slice g; block b handles the
/// same indices of every slice on every GPU, so block b's barrier covers exactly its data.
template <int kGpus>
__global__ void __launch_bounds__(kThreads) two_stage(Peers peers, int rank, size_t n, unsigned epoch,
                                                      Timeout* timeout, unsigned long long timeout_ns) {
  if (!barrier<kGpus>(peers, rank, kStart, epoch, timeout, timeout_ns)) return;
  const size_t n4 = n / 4, slice = (n4 + kGpus - 1) / kGpus;
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x, stride = size_t(gridDim.x) * blockDim.x;
  // 1. Reduce-scatter: sum slice `rank` of every input into slice `rank` of my output.
  const size_t mine = rank * slice;
  for (size_t j = first; j < slice && mine + j < n4; j += stride) {
    float4 v[kGpus];
#pragma unroll
    for (int p = 0; p < kGpus; ++p) v[p] = reinterpret_cast<const float4*>(peers.in[p])[mine + j];
    float4 sum = v[0];
#pragma unroll
    for (int p = 1; p < kGpus; ++p) sum = {sum.x + v[p].x, sum.y + v[p].y, sum.z + v[p].z, sum.w + v[p].w};
    reinterpret_cast<float4*>(peers.out[rank])[mine + j] = sum;
  }
  if (blockIdx.x == 0 && threadIdx.x < n - n4 * 4) {  // the last n % 4 floats: every GPU sums them
    const size_t i = n4 * 4 + threadIdx.x;
    float sum = peers.in[0][i];
    for (int p = 1; p < kGpus; ++p) sum += peers.in[p][i];
    peers.out[rank][i] = sum;
  }
  if (!barrier<kGpus>(peers, rank, kMiddle, epoch, timeout, timeout_ns)) return;
  // 2. All-gather: copy every other GPU's finished slice from its output into mine.
  for (size_t j = first; j < slice; j += stride) {
    float4 v[kGpus];
#pragma unroll
    for (int k = 1; k < kGpus; ++k) {  // start with the next GPU, so the GPUs spread their reads
      const size_t i = ((rank + k) % kGpus) * slice + j;
      if (i < n4) v[k] = reinterpret_cast<const float4*>(peers.out[(rank + k) % kGpus])[i];
    }
#pragma unroll
    for (int k = 1; k < kGpus; ++k) {
      const size_t i = ((rank + k) % kGpus) * slice + j;
      if (i < n4) reinterpret_cast<float4*>(peers.out[rank])[i] = v[k];
    }
  }
  barrier<kGpus>(peers, rank, kEnd, epoch, timeout, timeout_ns);  // peers finished reading my slice
}
// [/excerpt:two-stage]

enum class Algorithm { kOneShot, kTwoStage };

// [excerpt:pick]
/// One-shot up to kOneShotMaxFloats, where it beats two-stage on two H100s joined by NVLink
/// (08_allreduce's table): small messages are all latency, and one-shot has one step.
inline Algorithm pick(size_t bytes) {
  return bytes <= kOneShotMaxFloats * sizeof(float) ? Algorithm::kOneShot : Algorithm::kTwoStage;
}
// [/excerpt:pick]

/// The host side: flags on every GPU, an epoch counter, and a launch on every GPU's stream.
class PeerAllReduce {
 public:
  /// Needs peer access enabled between all \p gpus (multi_gpu::enable_all_peers).
  explicit PeerAllReduce(int gpus, unsigned long long timeout_ns = 5'000'000'000ull)
      : gpus_(gpus), timeout_ns_(timeout_ns) {
    if (gpus > kMaxGpus) {
      std::fprintf(stderr, "This all-reduce handles up to %d GPUs; this machine has %d.\n", kMaxGpus, gpus);
      std::exit(tutorial::kExitUsage);
    }
    for (int d = 0; d < gpus; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaMalloc(&flags_[d], sizeof(Flags)));
      CUDA_CHECK(cudaMemset(flags_[d], 0, sizeof(Flags)));  // epoch 0: nobody has arrived
      CUDA_CHECK(cudaMalloc(&staging_[d], 2 * gpus * kOneShotMaxFloats * sizeof(float)));
      int sms = 0;
      CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
      max_blocks_ = std::min(max_blocks_ == 0 ? sms : std::min(max_blocks_, sms), kMaxBlocks);
    }
    CUDA_CHECK(cudaHostAlloc(&timeout_, sizeof(Timeout), cudaHostAllocMapped | cudaHostAllocPortable));
    *timeout_ = Timeout{};
    multi_gpu::synchronize_all(gpus);
  }
  ~PeerAllReduce() {
    for (int d = 0; d < gpus_; ++d)
      if (cudaSetDevice(d) == cudaSuccess) {
        cudaFree(flags_[d]);
        cudaFree(staging_[d]);
      }
    cudaFreeHost(timeout_);
  }
  PeerAllReduce(const PeerAllReduce&) = delete;
  PeerAllReduce& operator=(const PeerAllReduce&) = delete;

  /// Enqueues out[g] = sum of in[*] on every GPU g's stream. Only \p only_gpus GPUs launch
  /// (all by default): fewer is how the timeout test makes a peer that never comes.
  void run(Algorithm algorithm, const std::vector<float*>& in, const std::vector<float*>& out, size_t n,
           const std::vector<cudaStream_t>& streams, int only_gpus = -1) {
    Peers peers{};
    for (int d = 0; d < gpus_; ++d) {
      peers.in[d] = in[d];
      peers.out[d] = out[d];
      peers.flags[d] = flags_[d];
      peers.staging[d] = staging_[d];
    }
    if (algorithm == Algorithm::kOneShot && n > kOneShotMaxFloats) {
      std::fprintf(stderr, "one-shot takes at most %zu floats, not %zu\n", kOneShotMaxFloats, n);
      std::exit(tutorial::kExitUsage);
    }
    const size_t n4 = n / 4;
    const size_t work = algorithm == Algorithm::kOneShot ? n4 : (n4 + gpus_ - 1) / gpus_;
    const int blocks = int(std::max<size_t>(1, std::min<size_t>((work + kThreads - 1) / kThreads, max_blocks_)));
    ++epoch_;
    for (int d = 0; d < (only_gpus < 0 ? gpus_ : only_gpus); ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      launch(algorithm, blocks, streams[d], peers, d, n);
    }
  }

  /// After synchronizing: if a wait gave up, says which GPU, block and step, and returns false.
  bool report_timeout() const {
    if (!timeout_->happened) return true;
    std::fprintf(stderr, "all-reduce: GPU %d, block %d timed out at the %s: GPU %d never arrived.\n",
                 timeout_->gpu, timeout_->block, step_name(timeout_->step), timeout_->peer);
    return false;
  }
  const Timeout& timeout() const { return *timeout_; }

 private:
  template <int kGpus>
  void launch_for(Algorithm algorithm, int blocks, cudaStream_t stream, const Peers& peers, int rank, size_t n) {
    if (algorithm == Algorithm::kOneShot)
      one_shot<kGpus><<<blocks, kThreads, 0, stream>>>(peers, rank, n, epoch_, timeout_, timeout_ns_);
    else
      two_stage<kGpus><<<blocks, kThreads, 0, stream>>>(peers, rank, n, epoch_, timeout_, timeout_ns_);
    CUDA_CHECK_LAUNCH();
  }
  void launch(Algorithm algorithm, int blocks, cudaStream_t stream, const Peers& peers, int rank, size_t n) {
    switch (gpus_) {  // the GPU count is a template argument: the loops over peers unroll
      case 2: return launch_for<2>(algorithm, blocks, stream, peers, rank, n);
      case 3: return launch_for<3>(algorithm, blocks, stream, peers, rank, n);
      case 4: return launch_for<4>(algorithm, blocks, stream, peers, rank, n);
      case 5: return launch_for<5>(algorithm, blocks, stream, peers, rank, n);
      case 6: return launch_for<6>(algorithm, blocks, stream, peers, rank, n);
      case 7: return launch_for<7>(algorithm, blocks, stream, peers, rank, n);
      default: return launch_for<8>(algorithm, blocks, stream, peers, rank, n);
    }
  }
  int gpus_;
  unsigned long long timeout_ns_;
  Flags* flags_[kMaxGpus] = {};
  float* staging_[kMaxGpus] = {};
  int max_blocks_ = 0;
  unsigned epoch_ = 0;
  Timeout* timeout_ = nullptr;
};

}  // namespace allreduce
