// SGEMM step 8, tuned: the double-buffered kernel in five tile configurations, each verified and
// timed; the runner reports the fastest as the step's result. This is how BLAS libraries choose
// tile shapes: they compile many configurations and pick by measurement (CUTLASS's profiler,
// cuBLAS's heuristics, Triton's autotune), because the best shape depends on the GPU.
//
// Why these five. Step 7's tiles (8a) need well over 128 registers per thread (the README's table
// of compiled kernels), so only 2 blocks of 128 threads fit on an SM: 8 warps, 2 per scheduler,
// to hide shared-memory latency and barriers.
// Each configuration changes one thing against an earlier one:
//   8a  step 7's tiles: 128 x 128 x 16 block tile, 4 warps of 64 x 64, 8 x 16 results a thread.
//   8b  8a with each thread's 8 rows as 2 runs of 4, 32 rows apart (TM = 4, so WMITER = 2). At one
//       k a warp's float4 reads of A then cover 32 consecutive floats (each bank once) instead of
//       8 runs of 4 spread over 64 floats (2 addresses per bank): a 2-way bank conflict if the
//       hardware serves the warp's LDS.128 in one pass, none if it serves 8 lanes at a time.
//       The measurement tells which.
//   8c  256 threads: 8 warps of 64 x 32, 8 x 8 results a thread (2 x 2 runs of 4 x 4), and
//       __launch_bounds__(256, 2), which holds ptxas to 128 registers: 2 blocks = 16 warps per SM.
//   8d  8c with BK = 8: half the shared memory and the registers in flight, twice the barriers.
//   8e  8d's thread tiles on a 64 x 128 x 8 block tile: 128 threads, 4 blocks = 16 warps per SM,
//       so while one block waits at its barrier, three others can issue. Costs 1.5x the global
//       loads and shared-memory stores per FMA (a smaller tile reuses each value fewer times).
//       (With BK = 16 its 24 registers of loads in flight made ptxas spill under the 128 cap.)
#pragma once

#include <string>
#include <tutorial/table.hpp>
#include <vector>

#include "08_double_buffering.cuh"

namespace sgemm {

// [excerpt:configs]
struct Tiles8a : WarptileConfig {};

struct Tiles8b : WarptileConfig {
  static constexpr int TM = 4;  // WMITER = 2: rows m0..m0+3 and m0+32..m0+35
};

struct Tiles8c : WarptileConfig {
  static constexpr int WM = 64, WN = 32, WNITER = 2;  // 2 x 4 warps = 256 threads
  static constexpr int TM = 4, TN = 4;                // 2 x 2 runs of 4 x 4 = 8 x 8 a thread
  static constexpr int MIN_BLOCKS = 2;                // <= 65536 / 512 = 128 registers
};

struct Tiles8d : Tiles8c {
  static constexpr int BK = 8;
};

struct Tiles8e : Tiles8d {
  static constexpr int BM = 64, BN = 128;
  static constexpr int WM = 32, WN = 64;  // 2 x 2 warps = 128 threads
  static constexpr int MIN_BLOCKS = 4;    // <= 65536 / 512 = 128 registers
};
// [/excerpt:configs]

/// Column headers of the runner's table of configurations, and one row of it for \p Cfg: its
/// shape, then what ptxas and the occupancy calculator made of its fast-path kernel, asked from
/// the CUDA runtime for this GPU (local memory above 0 means ptxas spilled registers).
inline std::vector<std::string> tile_columns() {
  return {"Step",      "block tile",   "warp tile",     "results a thread", "threads",
          "registers", "local memory", "shared memory", "blocks/SM",        "warps/SM"};
}
template <typename Cfg>
std::vector<std::string> tile_row(const std::string& label) {
  using Tile = WarpTile<Cfg>;
  const auto kernel = sgemm_double_buffered<Cfg, false>;
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, Tile::kThreads, 0));
  using tutorial::format;
  return {label,
          format("%d x %d x %d", Cfg::BM, Cfg::BN, Cfg::BK),
          format("%d x %d", Cfg::WM, Cfg::WN),
          format("%d x %d (%d x %d runs of %d x %d)", Tile::RM, Tile::RN, Tile::WMITER, Cfg::WNITER,
                 Cfg::TM, Cfg::TN),
          std::to_string(Tile::kThreads),
          std::to_string(attr.numRegs),
          format("%zu B", attr.localSizeBytes),
          format("%zu KiB", attr.sharedSizeBytes / 1024),
          std::to_string(blocks),
          std::to_string(blocks * Tile::kThreads / 32)};
}

/// One configuration of the sweep: its table label, its launcher, its row of the table.
struct TileConfig {
  std::string label;
  Launch launch;
  std::vector<std::string> (*row)(const std::string& label);
};

inline std::vector<TileConfig> tile_sweep() {
  return {{"8a", launch_double_buffered<Tiles8a>, tile_row<Tiles8a>},
          {"8b", launch_double_buffered<Tiles8b>, tile_row<Tiles8b>},
          {"8c", launch_double_buffered<Tiles8c>, tile_row<Tiles8c>},
          {"8d", launch_double_buffered<Tiles8d>, tile_row<Tiles8d>},
          {"8e", launch_double_buffered<Tiles8e>, tile_row<Tiles8e>}};
}

}  // namespace sgemm
