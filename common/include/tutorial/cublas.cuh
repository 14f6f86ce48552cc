/// \file cublas.cuh
/// \brief Checking cuBLAS calls, the way check.cuh checks the CUDA runtime's.
///
/// cuBLAS returns its own status type, so CUDA_CHECK cannot take it. The programs that
/// compare with cuBLAS (chapter 07) wrap every call in CUBLAS_CHECK: a failure stops the
/// program with the call's text, file:line, the status's name and a hint.
#pragma once

#include <cublas_v2.h>

#include <cstdio>
#include <cstdlib>

#include "check.cuh"

namespace tutorial {

/// Prints a report of a failed cuBLAS call and exits. Used through CUBLAS_CHECK.
inline void check_cublas_call(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "cuBLAS call failed: %s\n  at %s:%d\n  %s: %s\n", call, file, line,
               cublasGetStatusName(status), cublasGetStatusString(status));
  if (status == CUBLAS_STATUS_NOT_INITIALIZED)
    std::fprintf(stderr, "  hint: cuBLAS could not start: check that the GPU is usable (nvidia-smi)\n");
  if (status == CUBLAS_STATUS_ARCH_MISMATCH || status == CUBLAS_STATUS_NOT_SUPPORTED)
    std::fprintf(stderr, "  hint: this GPU or cuBLAS version lacks the requested math mode or type\n");
  std::exit(kExitFailure);
}

}  // namespace tutorial

/// Checks one cuBLAS call: `CUBLAS_CHECK(cublasCreate(&handle));`
#define CUBLAS_CHECK(call) ::tutorial::check_cublas_call((call), #call, __FILE__, __LINE__)
