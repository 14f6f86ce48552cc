// cuBLAS at its best for one shape, the opponent a fair race needs. cublasGemmEx and cublasSgemm
// run the one algorithm cuBLAS's heuristic ranks first; cublasLt lists its top candidates, and the
// fastest of them on this GPU, at this shape, is cuBLAS's best. Each candidate is timed (median of
// a batch lasting about 200 ms), the fastest kept; a candidate that refuses the problem is skipped.
// Shared by 07_sgemm (fp32) and 07_tensor_cores (bf16). cublasLt has all of this since CUDA 11.0.
#pragma once

#include <cublasLt.h>

#include <string>
#include <tutorial/buffer.cuh>
#include <tutorial/cublas.cuh>
#include <tutorial/timer.cuh>
#include <vector>

#include "lab.cuh"

namespace lab {

/// A matrix as cuBLAS sees it: column-major, \p rows x \p cols, column pitch \p ld.
struct LtMatrix {
  cudaDataType type;
  int rows, cols, ld;
};

/// Column-major D = alpha * op(A) * op(B) + beta * D (D is C, fp32), with the algorithm chosen by
/// choose(): the fastest of cublasLt's top kCandidates.
class CublasBest {
 public:
  static constexpr int kCandidates = 8;
  static constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // what cuBLAS itself uses on Hopper

  CublasBest(cublasOperation_t op_a, cublasOperation_t op_b, LtMatrix a, LtMatrix b, LtMatrix c,
             cublasComputeType_t compute)
      : workspace_(kWorkspaceBytes) {
    CUBLAS_CHECK(cublasLtCreate(&handle_));
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, compute, CUDA_R_32F));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b));
    for (const auto& [layout, m] : {std::pair{&a_, a}, std::pair{&b_, b}, std::pair{&c_, c}})
      CUBLAS_CHECK(cublasLtMatrixLayoutCreate(layout, m.type, m.rows, m.cols, m.ld));
  }
  ~CublasBest() {  // no checks: a destructor must not exit
    for (cublasLtMatrixLayout_t layout : {a_, b_, c_}) cublasLtMatrixLayoutDestroy(layout);
    cublasLtMatmulDescDestroy(op_);
    cublasLtDestroy(handle_);
  }
  CublasBest(const CublasBest&) = delete;
  CublasBest& operator=(const CublasBest&) = delete;

  /// Picks the algorithm: with \p time_each, the fastest candidate on these operands (C is
  /// overwritten); without, the heuristic's first (checks only: nothing is timed).
  void choose(const void* A, const void* B, float* C, bool time_each) {
    cublasLtMatmulPreference_t preference = nullptr;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    const size_t workspace = kWorkspaceBytes;
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &workspace, sizeof workspace));
    std::vector<cublasLtMatmulHeuristicResult_t> found(kCandidates);
    int count = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_, b_, c_, c_, preference,
                                                                 kCandidates, found.data(), &count);
    cublasLtMatmulPreferenceDestroy(preference);
    CUBLAS_CHECK(status);
    if (count == 0) CUBLAS_CHECK(CUBLAS_STATUS_NOT_SUPPORTED);  // no algorithm at all: stop, saying so
    candidates_ = count;
    algo_ = found[0].algo;
    chosen_ = 0;
    if (!time_each) return;
    first_ms_ = best_ms_ = 0.0;
    for (int i = 0; i < count; ++i) {
      const cublasLtMatmulAlgo_t* algo = &found[i].algo;
      if (matmul(*algo, 1.0f, A, B, 0.0f, C) != CUBLAS_STATUS_SUCCESS) continue;  // refused: skip it
      const double ms = time_step([&] { CUBLAS_CHECK(matmul(*algo, 1.0f, A, B, 0.0f, C)); }, 50, 200.0).median_ms;
      if (i == 0) first_ms_ = ms;
      if (best_ms_ == 0.0 || ms < best_ms_) {
        best_ms_ = ms;
        algo_ = *algo;
        chosen_ = i;
      }
    }
    if (best_ms_ == 0.0) CUBLAS_CHECK(CUBLAS_STATUS_NOT_SUPPORTED);  // every candidate refused
  }

  void run(float alpha, const void* A, const void* B, float beta, float* C) const {
    CUBLAS_CHECK(matmul(algo_, alpha, A, B, beta, C));
  }

  /// Which candidate won, what it is (cublasLt.h's numbers: algorithm id, cublasLtMatmulTile_t,
  /// cublasLtMatmulStages_t, split-K), and its time against the heuristic's first.
  std::string chosen() const {
    std::string line = tutorial::format("candidate %d of cublasLt's top %d (algorithm %d, tile id %d, stages id %d, "
                                        "split-K %d)",
                                        chosen_ + 1, candidates_, config(CUBLASLT_ALGO_CONFIG_ID),
                                        config(CUBLASLT_ALGO_CONFIG_TILE_ID), config(CUBLASLT_ALGO_CONFIG_STAGES_ID),
                                        config(CUBLASLT_ALGO_CONFIG_SPLITK_NUM));
    if (first_ms_ > 0.0)
      line += tutorial::format("; its time is %.1f%% of the heuristic's first", 100.0 * best_ms_ / first_ms_);
    return line;
  }
  int chosen_index() const { return chosen_ + 1; }

 private:
  int config(cublasLtMatmulAlgoConfigAttributes_t attribute) const {
    int32_t value = 0;  // every attribute read here is a 32-bit integer
    size_t written = 0;
    CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo_, attribute, &value, sizeof value, &written));
    return value;
  }
  cublasStatus_t matmul(const cublasLtMatmulAlgo_t& algo, float alpha, const void* A, const void* B, float beta,
                        float* C) const {
    return cublasLtMatmul(handle_, op_, &alpha, A, a_, B, b_, &beta, C, c_, C, c_, &algo, workspace_.data(),
                          kWorkspaceBytes, nullptr);
  }
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  tutorial::DeviceBuffer<unsigned char> workspace_;
  cublasLtMatmulAlgo_t algo_{};
  int candidates_ = 0, chosen_ = 0;
  double first_ms_ = 0.0, best_ms_ = 0.0;
};

}  // namespace lab
