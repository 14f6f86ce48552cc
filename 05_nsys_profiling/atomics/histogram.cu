// Chapter 05, lesson "atomics", part 1: a histogram of 8-bit values into 256 bins.
//
// Four kernels of our own (atomics on global memory; a private histogram per block in shared
// memory; the same with warp aggregation; the same with a copy per lane, free of bank conflicts)
// raced against CUB's DeviceHistogram::HistogramEven on the same data, two inputs: uniform random
// bytes, and every byte in one bin. Each run is checked exactly against the host's count; the
// race is interleaved (one of each contender per round).
#include <cub/device/device_histogram.cuh>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <cstdio>
#include <tutorial/buffer.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>
#include <vector>

namespace {

constexpr int kBins = 256;
constexpr int kThreads = 512;

// Every kernel reads 16 bytes a thread per step (one uint4), then the tail byte by byte. A warp
// steps together (count is called by all 32 lanes, valid false where a lane has no byte), so
// that warp votes inside count see every lane.
template <typename Count>
__device__ void for_each_byte(const uint8_t* data, size_t n, Count&& count) {
  const size_t vectors = n / 16, stride = size_t(gridDim.x) * blockDim.x;
  const size_t first = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (size_t v = first; __any_sync(0xFFFFFFFF, v < vectors); v += stride) {
    const bool valid = v < vectors;
    const uint4 packed = valid ? reinterpret_cast<const uint4*>(data)[v] : uint4{};
    const uint32_t words[4] = {packed.x, packed.y, packed.z, packed.w};
    for (uint32_t word : words)
      for (int b = 0; b < 4; ++b) count((word >> (8 * b)) & 0xFF, valid);
  }
  const size_t tail = vectors * 16 + first;  // at most 15 bytes: the grid's first warp takes them
  if (n % 16 != 0 && first < 32) count(tail < n ? data[tail] : 0, tail < n);
}

// [excerpt:global-atomics]
__global__ void histogram_global(const uint8_t* data, size_t n, unsigned* bins) {
  for_each_byte(data, n, [&](uint32_t value, bool valid) {
    if (valid) atomicAdd(&bins[value], 1u);  // every byte: one atomic in global memory (L2)
  });
}
// [/excerpt:global-atomics]

// [excerpt:shared-privatized]
__global__ void histogram_shared(const uint8_t* data, size_t n, unsigned* bins) {
  __shared__ unsigned block_bins[kBins];  // this block's private histogram
  for (int b = threadIdx.x; b < kBins; b += blockDim.x) block_bins[b] = 0;
  __syncthreads();
  for_each_byte(data, n, [&](uint32_t value, bool valid) {
    if (valid) atomicAdd(&block_bins[value], 1u);  // on-chip atomics
  });
  __syncthreads();  // every count is in: add this block's histogram to the global one
  for (int b = threadIdx.x; b < kBins; b += blockDim.x)
    if (block_bins[b]) atomicAdd(&bins[b], block_bins[b]);
}
// [/excerpt:shared-privatized]

// Kernel 2 with warp aggregation.
__global__ void histogram_warp_aggregated(const uint8_t* data, size_t n, unsigned* bins) {
  __shared__ unsigned block_bins[kBins];
  for (int b = threadIdx.x; b < kBins; b += blockDim.x) block_bins[b] = 0;
  __syncthreads();
  const int lane = threadIdx.x % 32;
  for_each_byte(data, n, [&](uint32_t value, bool valid) {
    // [excerpt:warp-aggregated]
    // All 32 lanes hold the same value: one atomic of 32 instead of 32 atomics on one address.
    const uint32_t key = valid ? value : 0x100;
    if (__all_sync(0xFFFFFFFF, key == __shfl_sync(0xFFFFFFFF, key, 0))) {
      if (lane == 0 && valid) atomicAdd(&block_bins[value], 32u);
    } else if (valid) {
      atomicAdd(&block_bins[value], 1u);
    }
    // [/excerpt:warp-aggregated]
  });
  __syncthreads();
  for (int b = threadIdx.x; b < kBins; b += blockDim.x)
    if (block_bins[b]) atomicAdd(&bins[b], block_bins[b]);
}

// Kernel 2 with one copy of the histogram per lane: bin b of lane l at b * 32 + l, in bank l. Two
// lanes of a warp never share a bank, whatever their bytes; in kernel 2, uniform bytes spread a
// warp's 32 atomics over random banks, and those that share one wait for each other.
// [excerpt:per-lane]
__global__ void histogram_per_lane(const uint8_t* data, size_t n, unsigned* bins) {
  __shared__ unsigned lane_bins[kBins * 32];  // 32 KiB; lane l of every warp adds to copy l
  for (int i = threadIdx.x; i < kBins * 32; i += blockDim.x) lane_bins[i] = 0;
  __syncthreads();
  const int lane = threadIdx.x % 32;
  for_each_byte(data, n, [&](uint32_t value, bool valid) {
    if (valid) atomicAdd(&lane_bins[value * 32 + lane], 1u);
  });
  __syncthreads();
  for (int b = threadIdx.x; b < kBins; b += blockDim.x) {  // thread b adds the 32 copies of bin b
    unsigned sum = 0;
    for (int k = 0; k < 32; ++k) sum += lane_bins[b * 32 + (b + k) % 32];  // a warp's reads: 32 banks
    if (sum) atomicAdd(&bins[b], sum);
  }
}
// [/excerpt:per-lane]

using Kernel = void (*)(const uint8_t*, size_t, unsigned*);
struct Way {
  const char* name;
  Kernel kernel;
};
const Way kWays[] = {{"1 global atomics", histogram_global},
                     {"2 shared-memory privatization", histogram_shared},
                     {"3 shared + warp aggregation", histogram_warp_aggregated},
                 {"4 shared, a copy per lane", histogram_per_lane}};

// CUB's histogram, temporary storage allocated once (as a real program would).
struct CubHistogram {
  tutorial::DeviceBuffer<unsigned char> temp;
  size_t temp_bytes = 0;
  const uint8_t* data;
  int n;
  unsigned* bins;
  CubHistogram(const uint8_t* d, int count, unsigned* b) : data(d), n(count), bins(b) {
    // [excerpt:cub]
    CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, data, bins, kBins + 1, 0, kBins, n));
    temp = tutorial::DeviceBuffer<unsigned char>(temp_bytes);  // the first call only asked how much
    // [/excerpt:cub]
  }
  void operator()() {
    CUDA_CHECK(cub::DeviceHistogram::HistogramEven(temp.data(), temp_bytes, data, bins, kBins + 1, 0, kBins, n));
  }
};

__global__ void make_input(uint8_t* data, size_t n, bool one_bin) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ uint32_t(i >> 32);  // a hash: uniform bytes
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    data[i] = one_bin ? 7 : uint8_t(h >> 24);
  }
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("05_histogram", "A 256-bin histogram of bytes, four ways, raced against CUB.");
  cli.add_int("n", "bytes to count", 1 << 28, 1, (1ll << 31) - 1);
  cli.add_int("runs", "timed rounds (median reported)", 20, 1, 1000);
  cli.add_flag("check-only", "verify, do not time");
  cli.parse_or_exit(argc, argv);
  const size_t n = size_t(cli.get_int("n"));
  const int runs = int(cli.get_int("runs"));
  const tutorial::DeviceInfo device = tutorial::require_gpu();
  tutorial::require_device_memory(n, "the input");
  tutorial::Verifier verifier;

  // Each kernel launches one full wave of blocks (its own occupancy); the grid-stride loop does the rest.
  std::vector<int> grids;
  std::printf("%zu bytes into %d bins; blocks of %d threads for kernels 1 to 4:", n, kBins, kThreads);
  for (const Way& way : kWays) {
    int blocks_per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, way.kernel, kThreads, 0));
    grids.push_back(device.sm_count * blocks_per_sm);
    std::printf(" %d", grids.back());
  }
  std::printf("\n");
  tutorial::DeviceBuffer<uint8_t> data(n);
  tutorial::DeviceBuffer<unsigned> bins(kBins);
  CubHistogram cub_histogram(data.data(), int(n), bins.data());

  for (const bool one_bin : {false, true}) {
    const char* input = one_bin ? "all in one bin" : "uniform";
    make_input<<<device.sm_count * 8, 256>>>(data.data(), n, one_bin);
    CUDA_CHECK_LAUNCH();
    const std::vector<uint8_t> host = data.download();
    std::vector<unsigned> want(kBins, 0);
    for (uint8_t v : host) ++want[v];

    std::vector<std::function<void()>> contenders;
    std::vector<const char*> names;
    for (size_t w = 0; w < grids.size(); ++w) {
      contenders.push_back([&, w] {
        CUDA_CHECK(cudaMemsetAsync(bins.data(), 0, bins.bytes()));  // part of the job: CUB clears too
        kWays[w].kernel<<<grids[w], kThreads>>>(data.data(), n, bins.data());
        CUDA_CHECK_LAUNCH();
      });
      names.push_back(kWays[w].name);
    }
    contenders.push_back([&] { cub_histogram(); });
    names.push_back("CUB DeviceHistogram::HistogramEven");

    std::printf("\n### Input: %s\n\n", input);
    for (size_t c = 0; c < contenders.size(); ++c) {
      bins.poison();
      contenders[c]();
      CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<unsigned> got = bins.download();
      verifier.exact(tutorial::format("%s, %s", names[c], input), tutorial::max_abs_error(got.data(), want.data(), kBins));
    }
    if (cli.get_flag("check-only")) continue;

    // [excerpt:race]
    std::vector<std::vector<double>> samples(contenders.size());
    tutorial::EventTimer timer;
    for (int round = -1; round < runs; ++round)  // round -1: warm-up
      for (size_t k = 0; k < contenders.size(); ++k) {
        const size_t c = (k + std::max(round, 0)) % contenders.size();  // who goes first rotates
        timer.start();
        contenders[c]();
        timer.stop();
        if (round >= 0) samples[c].push_back(timer.elapsed_ms());
      }
    // [/excerpt:race]
    std::vector<tutorial::Timing> t;
    for (auto& s : samples) t.push_back(tutorial::summarize(s));
    const tutorial::Timing& cub = t.back();
    tutorial::Table table({"Way", "Median", "Range of runs", "GB/s", "% of CUB"});
    double best = 0;
    for (size_t c = 0; c < t.size(); ++c) {
      const double share = 100 * cub.median_ms / t[c].median_ms;
      if (c + 1 < t.size()) best = std::max(best, share);
      table.add_row({names[c], tutorial::format_time(t[c].median_ms),
                     tutorial::format_time(t[c].min_ms) + " - " + tutorial::format_time(t[c].max_ms),
                     tutorial::format("%.0f", tutorial::gigabytes_per_second(double(n), t[c].median_ms)),
                     tutorial::format("%.1f%%", share)});
      const char* key = one_bin ? "one_bin" : "uniform";
      verifier.figure(tutorial::format("%s_way%zu_pct_of_cub", key, c + 1), std::round(share * 10) / 10);
      verifier.figure(tutorial::format("%s_way%zu_gbs", key, c + 1),
                      std::round(tutorial::gigabytes_per_second(double(n), t[c].median_ms)));
    }
    table.print();
    std::printf("\nCUB's spread: %.1f%% of its median.\n\n", 100 * (cub.max_ms - cub.min_ms) / cub.median_ms);
    verifier.goal(tutorial::format("our best histogram, %s, share of CUB's throughput (moonshot 100%%)", input),
                  best, 90, "%");
    verifier.figure(tutorial::format("%s_cub_gbs", one_bin ? "one_bin" : "uniform"),
                    std::round(tutorial::gigabytes_per_second(double(n), cub.median_ms)));
  }
  return verifier.finish("05_histogram");
}
