/// \file mpi_hang.cuh
/// \brief Chapter 08, part 5: a rank that never comes, caught. The test modes of 08_mpi_allreduce.
///
/// When one rank never calls the all-reduce, every wait for it that has no deadline hangs the
/// job: cudaStreamSynchronize, a blocking NCCL call, a spin-wait. Here rank world-1 skips the
/// second call and waits elsewhere, outside MPI, as a stuck rank does (in cudaStreamSynchronize,
/// behind a kernel that runs for a minute); the other ranks must notice within a deadline, name it
/// (from the progress counters in shared memory, which need nothing from the stuck rank), and end
/// the whole job. These modes poll their own deadline; the watchdog is the net under every other wait.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "ipc_allreduce.cuh"
#include "mpi_job.hpp"
#include "nccl_check.hpp"

namespace multi_gpu {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Every rank's worst error, on every rank (a NaN, from a poisoned element, counts as infinite).
inline double worst_over_ranks(double error) {
  return mpi_job::max_over_ranks(std::isnan(error) ? INFINITY : error);
}

/// --hang-nccl: rank world-1 never calls the second all-reduce. The others, on a non-blocking
/// communicator, poll instead of waiting: the stream (cudaStreamQuery) and NCCL's error
/// (ncclCommGetAsyncError), against a deadline. Then ncclCommAbort, one line naming the rank
/// that never came (read from every rank's progress counter), and the whole job ends non-zero.
/// The absent rank: stuck in cudaStreamSynchronize behind a minute-long kernel, outside MPI and
/// outside its watchdog's watch (its waits are not marked), until the others end the job.
[[noreturn]] inline void stay_stuck(cudaStream_t stream) {
  stall_kernel<<<1, 1, 0, stream>>>(60'000'000'000ull);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::fprintf(stderr, "the absent rank waited a minute and nobody ended the job\n");
  std::exit(tutorial::kExitFailure);
}

inline int hang_nccl(const mpi_job::Job& job, const ncclUniqueId& id, cudaStream_t stream, double deadline_s,
                     mpi_job::Progress& progress) {
  // [excerpt:nonblocking-init]
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // NCCL calls return at once (ncclInProgress); we do the waiting, with a deadline
  ncclComm_t comm;
  const ncclResult_t started = ncclCommInitRankConfig(&comm, job.world, id, job.rank, &config);
  if (started != ncclInProgress) NCCL_CHECK(started);
  // [/excerpt:nonblocking-init]
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress) NCCL_CHECK(ncclCommGetAsyncError(comm, &state));
  NCCL_CHECK(state);
  const size_t n = 1024;
  multi_gpu::GpuArray<float> in(job.local_rank, n), out(job.local_rank, n);
  std::vector<float> host(n), expected(n, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    host[i] = multi_gpu::exact_input(job.rank, i);
    for (int r = 0; r < job.world; ++r) expected[i] += multi_gpu::exact_input(r, i);
  }
  in.upload(host);
  auto all_reduce = [&] {
    progress.step();  // posted before the call, where every rank can read it
    const ncclResult_t called = ncclAllReduce(in.data(), out.data(), n, ncclFloat, ncclSum, comm, stream);
    if (called != ncclInProgress) NCCL_CHECK(called);
  };
  // [excerpt:poll]
  // Waits without blocking: true when the call is done, false when the deadline passed. Until
  // NCCL stops answering ncclInProgress the call may not be on the stream yet, which then looks idle.
  auto finished_by = [&](double deadline) {
    const auto start = Clock::now();
    for (;;) {
      ncclResult_t async = ncclSuccess;
      NCCL_CHECK(ncclCommGetAsyncError(comm, &async));
      if (async != ncclSuccess && async != ncclInProgress) NCCL_CHECK(async);  // a peer or link failed
      if (async == ncclSuccess) {
        const cudaError_t query = cudaStreamQuery(stream);
        if (query == cudaSuccess) return true;
        if (query != cudaErrorNotReady) CUDA_CHECK(query);
      }
      if (seconds_since(start) > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  // [/excerpt:poll]
  all_reduce();  // call 1, on every rank: the communicator works
  if (!finished_by(60)) mpi_job::abort_job(tutorial::kExitFailure);
  const std::vector<float> got = out.download();
  const double error = worst_over_ranks(tutorial::max_abs_error(got.data(), expected.data(), n));
  if (job.rank == 0) std::printf("Max error: %g  (call 1, every rank took part)\n", error);
  std::fflush(stdout);
  if (error != 0) mpi_job::abort_job(tutorial::kExitFailure);

  const int missing = job.world - 1;
  if (job.rank == missing) stay_stuck(stream);  // call 2: this rank never comes
  const auto called = Clock::now();
  all_reduce();
  // [excerpt:abort]
  if (!finished_by(deadline_s)) {
    const double noticed = seconds_since(called);
    const std::string absent = progress.who_is_missing(job.rank);
    const ncclResult_t aborted = ncclCommAbort(comm);  // stops NCCL's kernels and threads
    if (aborted != ncclInProgress) NCCL_CHECK(aborted);
    std::fprintf(stderr, "rank %d: all-reduce 2 not done after %.1f s (deadline %.1f s): %s; "
                 "communicator aborted in %.2f s, ending the job\n", job.rank, noticed, deadline_s, absent.c_str(),
                 seconds_since(called) - noticed);
    mpi_job::abort_job(tutorial::kExitFailure);
  }
  // [/excerpt:abort]
  std::fprintf(stderr, "rank %d: all-reduce 2 finished without rank %d: that cannot be\n", job.rank, missing);
  mpi_job::abort_job(tutorial::kExitFailure);
}

/// --hang-mine: the same with our own kernel over IPC. Its waits are bounded on the GPU: the
/// kernel gives up, says where, and the stream finishes; the host then names the absent rank.
inline int hang_mine(const mpi_job::Job& job, cudaStream_t stream, double deadline_s, mpi_job::Progress& progress) {
  const size_t n = 1024;
  multi_gpu::IpcAllReduce mine(job, n, stream, (unsigned long long)(deadline_s * 1e9));
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = multi_gpu::exact_input(job.rank, i);
  CUDA_CHECK(cudaMemcpy(mine.in(), host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());
  mpi_job::barrier();
  const allreduce::Algorithm algorithm = allreduce::Algorithm::kOneShotLL;  // the small messages' kernel
  progress.step();
  mine.run(algorithm, n, stream);  // call 1, every rank
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (mpi_job::min_over_ranks(!mine.timed_out()) == 0) mpi_job::abort_job(tutorial::kExitFailure);
  const int missing = job.world - 1;
  if (job.rank == missing) stay_stuck(stream);
  const auto called = Clock::now();
  progress.step();
  mine.run(algorithm, n, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));  // returns: the kernel's wait is bounded
  if (!mine.timed_out()) {
    std::fprintf(stderr, "rank %d: all-reduce 2 finished without rank %d: that cannot be\n", job.rank, missing);
    mpi_job::abort_job(tutorial::kExitFailure);
  }
  std::fprintf(stderr, "rank %d: our all-reduce gave up after %.1f s (deadline %.1f s): rank %d never arrived "
               "(%s GPU numbers are ranks); ending the job\n", job.rank, seconds_since(called), deadline_s,
               mine.timeout().peer, allreduce::describe(mine.timeout()).c_str());
  mpi_job::abort_job(tutorial::kExitFailure);
}

}  // namespace multi_gpu
