/// \file ipc_allreduce.cuh
/// \brief Step 3's all-reduce kernels with one process per GPU: the buffers shared through CUDA IPC.
///
/// In one process every GPU's buffers are plain pointers. Across processes each one is private
/// to the process that allocated it, until that process exports a handle for it
/// (cudaIpcGetMemHandle: 64 bytes that name the allocation) and the others open the handle
/// (cudaIpcOpenMemHandle), which maps the same GPU memory into their address space. The handles
/// travel through MPI. After that the kernels are the very same: each process launches its own
/// GPU's part, and the GPUs meet at the kernels' flags, across NVLink, as before.
/// All ranks must be on one host (IPC does not cross hosts).
#pragma once

#include <cstdio>
#include <string>

#include "allreduce.cuh"
#include "mpi_job.hpp"
#include "multi_gpu.cuh"

namespace multi_gpu {

class IpcAllReduce {
 public:
  /// Collective: every rank constructs it with the same \p max_floats. Allocates this rank's
  /// input, output and workspace on the current GPU, shares them, and opens every peer's.
  IpcAllReduce(const mpi_job::Job& job, size_t max_floats, cudaStream_t stream,
               unsigned long long timeout_ns = 5'000'000'000ull)
      : rank_(job.rank), world_(job.world), timeout_ns_(timeout_ns) {
    if (world_ > allreduce::kMaxGpus) {
      std::fprintf(stderr, "This all-reduce handles up to %d GPUs, not %d.\n", allreduce::kMaxGpus, world_);
      std::exit(tutorial::kExitUsage);
    }
    // [excerpt:ipc-share]
    void* mine[kBuffers];  // input, output, workspace: each its own allocation, so its own handle
    CUDA_CHECK(cudaMalloc(&mine[0], max_floats * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&mine[1], max_floats * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&mine[2], allreduce::workspace_bytes(world_)));
    allreduce::init_workspace(mine[2], world_, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    cudaIpcMemHandle_t own[kBuffers], handles[allreduce::kMaxGpus][kBuffers];
    for (int b = 0; b < kBuffers; ++b) CUDA_CHECK(cudaIpcGetMemHandle(&own[b], mine[b]));
    mpi_job::all_gather(own, handles, sizeof own);  // every rank's handles, on every rank
    for (int r = 0; r < world_; ++r)
      for (int b = 0; b < kBuffers; ++b)
        if (r == rank_) buffers_[r][b] = mine[b];
        else CUDA_CHECK(cudaIpcOpenMemHandle(&buffers_[r][b], handles[r][b], cudaIpcMemLazyEnablePeerAccess));
    // [/excerpt:ipc-share]
    for (int r = 0; r < world_; ++r) {
      peers_.in[r] = static_cast<const float*>(buffers_[r][0]);
      peers_.out[r] = static_cast<float*>(buffers_[r][1]);
      peers_.workspace[r] = buffers_[r][2];
    }
    CUDA_CHECK(cudaHostAlloc(&timeout_, sizeof(allreduce::Timeout), cudaHostAllocMapped));
    *timeout_ = allreduce::Timeout{};
    // Every rank launches the same grid: one block per SM of the smallest GPU (barriers pair block b
    // with block b; a grid that still differs is refused by the kernels, never summed).
    int sms = 0, device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    max_blocks_ = mpi_job::min_over_ranks(sms);
    mpi_job::barrier();  // every workspace is ready before any rank's first launch
  }

  /// Collective. Peers' memory is unmapped before anyone frees their own: an allocation must
  /// not be freed while another process still has it open.
  ~IpcAllReduce() {
    for (int r = 0; r < world_; ++r)
      if (r != rank_)
        for (void* peer : buffers_[r]) CUDA_CHECK(cudaIpcCloseMemHandle(peer));
    mpi_job::barrier();
    for (void* own : buffers_[rank_]) CUDA_CHECK(cudaFree(own));
    CUDA_CHECK(cudaFreeHost(timeout_));
  }
  IpcAllReduce(const IpcAllReduce&) = delete;
  IpcAllReduce& operator=(const IpcAllReduce&) = delete;

  float* in() const { return static_cast<float*>(buffers_[rank_][0]); }
  float* out() const { return static_cast<float*>(buffers_[rank_][1]); }

  /// Enqueues this rank's part of out = sum over ranks of in, n floats, on \p stream. Every rank
  /// makes the same calls. (launch refuses to go on after a wait gave up: the flags no longer match.)
  void run(allreduce::Algorithm algorithm, size_t n, cudaStream_t stream) {
    allreduce::launch(algorithm, peers_, rank_, world_, n, stream, timeout_, timeout_ns_, 0, max_blocks_);
  }

  /// After the stream is synchronized: did a wait give up? (Its GPU numbers are ranks here.)
  bool timed_out() const { return timeout_->happened != 0; }
  const allreduce::Timeout& timeout() const { return *timeout_; }

 private:
  static constexpr int kBuffers = 3;
  int rank_, world_;
  unsigned long long timeout_ns_;
  int max_blocks_ = 0;
  void* buffers_[allreduce::kMaxGpus][kBuffers] = {};
  allreduce::Peers peers_{};
  allreduce::Timeout* timeout_ = nullptr;
};

}  // namespace multi_gpu
