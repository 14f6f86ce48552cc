/// \file nccl_check.hpp
/// \brief Checking every NCCL call, and the errors NCCL reports later, on its own threads.
///
/// NCCL returns ncclResult_t. A call can succeed and the collective it queued fail later
/// (a network error, a peer that reported a failure): that shows only through
/// ncclCommGetAsyncError, so a program that waited for NCCL work checks it too. A peer that
/// simply never comes is different: the wait itself never returns. Against that, poll with a
/// deadline on a non-blocking communicator and ncclCommAbort (mpi_allreduce.cu, --hang-nccl).
#pragma once

#include <nccl.h>

#include <cstdio>
#include <cstdlib>

#include <tutorial/check.cuh>  // the course's exit codes

namespace multi_gpu {

[[noreturn]] inline void fail_nccl_call(ncclResult_t result, const char* call, const char* file,
                                        int line) {
  std::fprintf(stderr, "NCCL call failed: %s\n  at %s:%d\n  %s\n", call, file, line,
               ncclGetErrorString(result));
  const char* last = ncclGetLastError(nullptr);  // NCCL's own text about the last failure
  if (last && *last) std::fprintf(stderr, "  NCCL says: %s\n", last);
  if (result == ncclSystemError || result == ncclRemoteError)
    std::fprintf(stderr, "  hint: run with NCCL_DEBUG=WARN (or INFO) to see which peer or link failed\n");
  if (result == ncclInvalidUsage)
    std::fprintf(stderr, "  hint: one thread driving several GPUs must put their calls between "
                         "ncclGroupStart and ncclGroupEnd\n");
  std::exit(tutorial::kExitFailure);
}

inline void check_nccl_call(ncclResult_t result, const char* call, const char* file, int line) {
  if (result != ncclSuccess) fail_nccl_call(result, call, file, line);
}

/// An error NCCL found after the call returned (it keeps it per communicator).
inline void check_nccl_async(ncclComm_t comm, const char* file, int line) {
  ncclResult_t async = ncclSuccess;
  check_nccl_call(ncclCommGetAsyncError(comm, &async), "ncclCommGetAsyncError", file, line);
  if (async != ncclSuccess) fail_nccl_call(async, "(an earlier collective, asynchronously)", file, line);
}

/// The NCCL this program was compiled against (nccl.h) must be the one it runs with
/// (libnccl.so): two copies on one machine (the system's and PyTorch's) are common.
inline void require_matching_nccl() {
  int runtime = 0;
  check_nccl_call(ncclGetVersion(&runtime), "ncclGetVersion", __FILE__, __LINE__);
  // NCCL_VERSION_CODE is major * 10000 + minor * 100 + patch since 2.9.
  const int header = NCCL_VERSION_CODE;
  std::printf("NCCL %d.%d.%d (compiled against %d.%d.%d)\n", runtime / 10000, runtime / 100 % 100,
              runtime % 100, header / 10000, header / 100 % 100, header % 100);
  if (runtime / 100 != header / 100) {
    std::fprintf(stderr, "libnccl is %d.%d but nccl.h was %d.%d: the program loaded another NCCL "
                         "than it was built with (check LD_LIBRARY_PATH).\n",
                 runtime / 10000, runtime / 100 % 100, header / 10000, header / 100 % 100);
    std::exit(tutorial::kExitFailure);
  }
}

}  // namespace multi_gpu

/// Wraps an NCCL call: `NCCL_CHECK(ncclAllReduce(...));`
#define NCCL_CHECK(call) ::multi_gpu::check_nccl_call((call), #call, __FILE__, __LINE__)
/// After NCCL work on \p comm finished (or while polling it): did any of it fail?
#define NCCL_CHECK_ASYNC(comm) ::multi_gpu::check_nccl_async((comm), __FILE__, __LINE__)
