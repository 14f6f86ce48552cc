// Part 3: how fast data moves between host and GPU, each way: cudaMemcpy from pageable
// and from pinned host memory, and cudaMemPrefetchAsync of managed memory. Then the same
// bytes copied within GPU memory, to show what staying on the GPU is worth.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <tutorial/buffer.cuh>
#include <tutorial/check.cuh>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>

#include "memory_kinds.cuh"
#include "parts.cuh"

namespace chapter02 {
namespace {

struct Bandwidth {
  double to_gpu_gbs, to_host_gbs, max_error;
};

// cudaMemcpy of `count` floats between `host` (pageable or pinned) and GPU memory,
// GB/s each way (median of `runs`, after warm-up). The data makes a checked round
// trip: GPU memory is poisoned before the upload and host memory before the download.
Bandwidth memcpy_bandwidth(float* host, size_t count, int runs) {
  const size_t bytes = count * sizeof(float);
  tutorial::DeviceBuffer<float> device(count);
  device.poison();
  std::fill_n(host, count, 1.0f);
  tutorial::TimingPlan plan;
  plan.runs = runs;
  const tutorial::Timing up = tutorial::time_gpu(
      [&] { CUDA_CHECK(cudaMemcpy(device.data(), host, bytes, cudaMemcpyHostToDevice)); }, plan);
  std::fill_n(host, count, std::numeric_limits<float>::quiet_NaN());
  const tutorial::Timing down = tutorial::time_gpu(
      [&] { CUDA_CHECK(cudaMemcpy(host, device.data(), bytes, cudaMemcpyDeviceToHost)); }, plan);
  return {tutorial::gigabytes_per_second(bytes, up.median_ms),
          tutorial::gigabytes_per_second(bytes, down.median_ms),
          tutorial::max_abs_error_from(host, 1.0, count)};
}

// cudaMemPrefetchAsync of `count` floats of managed memory to the GPU and back, GB/s
// each way. Every run moves all the pages both ways, since each prefetch undoes the last.
Bandwidth prefetch_bandwidth(size_t count, int device, int runs) {
  ManagedBuffer<float> data(count, 1.0f);
  tutorial::EventTimer to_gpu, to_host;
  std::vector<double> up, down;
  constexpr int kWarmup = 1;
  for (int r = 0; r < kWarmup + runs; ++r) {
    to_gpu.start();
    prefetch(data.data(), data.bytes(), device);
    to_gpu.stop();
    to_host.start();
    prefetch(data.data(), data.bytes(), cudaCpuDeviceId);
    to_host.stop();
    if (r < kWarmup) continue;
    up.push_back(to_gpu.elapsed_ms());
    down.push_back(to_host.elapsed_ms());
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  return {tutorial::gigabytes_per_second(data.bytes(), median_ms(up)),
          tutorial::gigabytes_per_second(data.bytes(), median_ms(down)),
          tutorial::max_abs_error_from(data.data(), 1.0, count)};
}

std::string gbs(double value) { return tutorial::format("%.1f GB/s", value); }

}  // namespace

void host_gpu_bandwidth(size_t count, int runs, int device, bool concurrent_access,
                        tutorial::Verifier& verifier) {
  const size_t bytes = count * sizeof(float);
  std::printf("\n3. Moving %zu floats (%.0f MiB) between host and GPU, median of %d runs.\n",
              count, bytes / double(1 << 20), runs);
  Bandwidth pageable, pinned;
  {
    std::vector<float> host(count);
    pageable = memcpy_bandwidth(host.data(), count, runs);
  }
  verifier.exact("cudaMemcpy round trip, pageable host memory", pageable.max_error);
  {
    PinnedBuffer<float> host(count, 0.0f);
    pinned = memcpy_bandwidth(host.data(), count, runs);
  }
  verifier.exact("cudaMemcpy round trip, pinned host memory", pinned.max_error);

  tutorial::Table table({"how", "host to GPU", "GPU to host", "host to GPU vs pinned"});
  table.add_row({"cudaMemcpy, pageable host memory", gbs(pageable.to_gpu_gbs),
                 gbs(pageable.to_host_gbs),
                 tutorial::format("%.2fx", pageable.to_gpu_gbs / pinned.to_gpu_gbs)});
  table.add_row({"cudaMemcpy, pinned host memory", gbs(pinned.to_gpu_gbs),
                 gbs(pinned.to_host_gbs), "1.00x"});
  if (concurrent_access) {
    const Bandwidth migrated = prefetch_bandwidth(count, device, runs);
    verifier.exact("cudaMemPrefetchAsync round trip, managed memory", migrated.max_error);
    table.add_row({"cudaMemPrefetchAsync, managed memory", gbs(migrated.to_gpu_gbs),
                   gbs(migrated.to_host_gbs),
                   tutorial::format("%.2fx", migrated.to_gpu_gbs / pinned.to_gpu_gbs)});
  }
  std::printf("\n");
  table.print();

  // The same bytes copied within GPU memory, for scale. copy_bandwidth_gbs counts bytes
  // read plus bytes written; the time it implies is what compares with the link.
  tutorial::TimingPlan plan;
  plan.runs = runs;
  const double on_gpu_gbs = tutorial::copy_bandwidth_gbs(bytes, plan);
  const double on_gpu_ms = 2.0 * bytes / (on_gpu_gbs * 1e6);
  const double pinned_ms = bytes / (pinned.to_gpu_gbs * 1e6);
  std::printf(
      "\nFor scale: copying the same %.0f MiB within GPU memory took %s (%.0f GB/s, bytes read +\n"
      "written), against %s from pinned host memory: %.0fx faster. Data that stays on the GPU\n"
      "is that much cheaper to reach.\n",
      bytes / double(1 << 20), tutorial::format_time(on_gpu_ms).c_str(), on_gpu_gbs,
      tutorial::format_time(pinned_ms).c_str(), pinned_ms / on_gpu_ms);
  verifier.figure("pinned_to_gpu_gbs", std::round(pinned.to_gpu_gbs * 10) / 10);
  verifier.figure("pageable_to_gpu_gbs", std::round(pageable.to_gpu_gbs * 10) / 10);
  verifier.figure("on_gpu_vs_pinned", std::round(pinned_ms / on_gpu_ms));
}

}  // namespace chapter02
