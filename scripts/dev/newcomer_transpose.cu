// Development benchmark (issue 46), not part of the course: why 03_launch_params' best transpose
// reaches 84% of the copy on an H200 (93% on an H100), and which change closes the gap. Variants of
// the tiled transpose of launch_params.cu (tile T x T, blocks of 32 x BY threads, pitch T + 1) and
// the course's own transpose_tiled<4> and <8> (launch_params.cu included), interleaved round by
// round with the device-to-device copy of the same bytes; median and spread.
//   nvcc -O3 -arch=sm_90 -I common/include scripts/dev/newcomer_transpose.cu -o build/newcomer_transpose
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

#include <tutorial/buffer.cuh>
#include <tutorial/check.cuh>
#include <tutorial/device.cuh>
#include <tutorial/timer.cuh>

// The course's own kernels, compiled as the program compiles them (its main renamed).
#define main launch_params_main
#include "../../03_launch_config/launch_params.cu"
#undef main

template <int T, int BY, bool kStreaming>
__global__ void transpose(int rows, int cols, const unsigned* __restrict__ in, unsigned* __restrict__ out) {
  __shared__ unsigned tile[T * (T + 1)];
#pragma unroll
  for (int cx = 0; cx < T; cx += 32) {
    const int c = blockIdx.x * T + cx + threadIdx.x;
#pragma unroll
    for (int y = threadIdx.y; y < T; y += BY) {
      const int r = blockIdx.y * T + y;
      if (r < rows && c < cols) tile[y * (T + 1) + cx + threadIdx.x] = in[size_t(r) * cols + c];
    }
  }
  __syncthreads();
#pragma unroll
  for (int cx = 0; cx < T; cx += 32) {
    const int c = blockIdx.y * T + cx + threadIdx.x;
#pragma unroll
    for (int y = threadIdx.y; y < T; y += BY) {
      const int r = blockIdx.x * T + y;
      if (r < cols && c < rows) {
        const unsigned v = tile[(cx + threadIdx.x) * (T + 1) + y];
        if (kStreaming) __stcs(&out[size_t(r) * rows + c], v); else out[size_t(r) * rows + c] = v;
      }
    }
  }
}

struct Variant {
  const char* name;
  void (*kernel)(int, int, const unsigned*, unsigned*);
  int tile, by;
  void (*course)(int, int, int, const unsigned*, unsigned*) = nullptr;  // launch_params.cu's, pitch 33
  void launch(int rows, int cols, const unsigned* in, unsigned* out) const {
    const dim3 grid((cols + tile - 1) / tile, (rows + tile - 1) / tile), block(32, by);
    if (course)
      course<<<grid, block, 32 * 33 * sizeof(unsigned)>>>(rows, cols, 33, in, out);
    else
      kernel<<<grid, block>>>(rows, cols, in, out);
    CUDA_CHECK_LAUNCH();
  }
};

int main(int argc, char** argv) {
  tutorial::require_gpu();
  const Variant variants[] = {
      {"T32 32x8 (course: 4 rows/thread)", transpose<32, 8, false>, 32, 8},
      {"T32 32x4 (8 rows/thread)", transpose<32, 4, false>, 32, 4},
      {"T32 32x2 (16 rows/thread)", transpose<32, 2, false>, 32, 2},
      {"T64 32x8 (16 elements/thread)", transpose<64, 8, false>, 64, 8},
      {"T64 32x16 (8 elements/thread)", transpose<64, 16, false>, 64, 16},
      {"T32 32x8, streaming stores", transpose<32, 8, true>, 32, 8},
      {"T32 32x4, streaming stores", transpose<32, 4, true>, 32, 4},
      {"course transpose_tiled<4> (32x8)", nullptr, 32, 8, transpose_tiled<4>},
      {"course transpose_tiled<8> (32x4)", nullptr, 32, 4, transpose_tiled<8>},
  };
  const int sides[][2] = {{8192, 8192}, {16384, 16384}};
  const int rounds = 15;
  for (auto& side : sides) {
    const int rows = side[0], cols = side[1];
    const size_t elements = size_t(rows) * cols;
    tutorial::DeviceBuffer<unsigned> in(elements), out(elements), copy(elements);
    std::vector<unsigned> host(elements), got;
    std::iota(host.begin(), host.end(), 0u);
    in.upload(host);
    const double bytes = 2.0 * elements * sizeof(unsigned);
    const tutorial::TimingPlan plan{2, 10};
    std::vector<std::vector<double>> share(std::size(variants));
    std::vector<double> copy_gbs;
    for (const Variant& v : variants) {  // check each once, exactly
      out.poison();
      v.launch(rows, cols, in.data(), out.data());
      got = out.download();
      size_t wrong = 0;
      for (size_t c = 0; c < size_t(cols); ++c)
        for (size_t r = 0; r < size_t(rows); ++r) wrong += got[c * rows + r] != unsigned(r * cols + c);
      if (wrong) { std::printf("%s: %zu wrong elements\n", v.name, wrong); return 1; }
    }
    for (int round = 0; round < rounds; ++round) {
      const double copy_ms = tutorial::time_gpu([&] {
        CUDA_CHECK(cudaMemcpyAsync(copy.data(), in.data(), elements * 4, cudaMemcpyDeviceToDevice)); }, plan).median_ms;
      const double cgbs = tutorial::gigabytes_per_second(bytes, copy_ms);
      copy_gbs.push_back(cgbs);
      for (size_t i = 0; i < std::size(variants); ++i) {
        const Variant& v = variants[i];
        const double ms = tutorial::time_gpu([&] { v.launch(rows, cols, in.data(), out.data()); }, plan).median_ms;
        share[i].push_back(100 * tutorial::gigabytes_per_second(bytes, ms) / cgbs);
      }
    }
    std::sort(copy_gbs.begin(), copy_gbs.end());
    std::printf("\n%d x %d, copy %.0f GB/s (median of %d rounds); %% of copy, median [min, max]:\n", rows, cols,
                copy_gbs[rounds / 2], rounds);
    for (size_t i = 0; i < std::size(variants); ++i) {
      std::sort(share[i].begin(), share[i].end());
      std::printf("  %-36s %5.1f%% [%5.1f, %5.1f]\n", variants[i].name, share[i][rounds / 2], share[i].front(),
                  share[i].back());
    }
  }
  return 0;
}
