// Part 1: the add of chapter 01 (y = x + y with x = 1 and y = 2, so every result is
// exactly 3), done five ways on the same data, each verified and timed:
//   1. managed memory, first touch: the GPU page-faults the data in during the kernel;
//   2. managed memory, prefetched to the GPU before the kernel and back after it;
//   3. managed memory advised to stay in host memory: the GPU reads it across the link;
//   4. cudaMalloc + cudaMemcpy from pageable host memory (new, malloc, std::vector);
//   5. cudaMalloc + cudaMemcpy from pinned host memory (cudaMallocHost).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
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

// [excerpt:kernel]
// One thread per element, in blocks of 256: plenty of threads for this lesson.
// Chapter 03 is about choosing the launch configuration.
__global__ void add(size_t n, const float* x, float* y) {
  const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;  // this thread's element
  if (i < n) y[i] = x[i] + y[i];  // the last block has threads past the end: they do nothing
}

void launch_add(size_t n, const float* x, float* y) {
  constexpr unsigned kThreads = 256;
  const unsigned blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);  // rounded up
  add<<<blocks, kThreads>>>(n, x, y);
  CUDA_CHECK_LAUNCH();
}
// [/excerpt:kernel]

// Chapter 01's kernel, unchanged: one thread walks the whole array.
__global__ void add_chapter01(int n, const float* x, float* y) {
  for (int i = 0; i < n; ++i) y[i] = x[i] + y[i];
}

namespace {

// What one run of one approach measured, in milliseconds. NaN: not a step of its own.
struct RunTimes {
  double to_gpu_ms = NAN;   // moving the inputs to the GPU (CUDA events)
  double kernel_ms = NAN;   // the kernel alone (CUDA events)
  double to_host_ms = NAN;  // moving the result back to host memory (CUDA events)
  double total_ms = NAN;    // host clock: inputs in host memory -> every result checked by the CPU
  double max_error = NAN;   // worst |y - 3|
};

// 1. Managed memory, first touch. The CPU wrote x and y, so their pages are in host
// memory. The kernel's first access to each page faults; the driver migrates pages to
// the GPU while the kernel waits, so that move is inside the kernel's time. Reading y
// on the CPU afterwards faults its pages back, inside the total.
RunTimes managed_first_touch(size_t n) {
  ManagedBuffer<float> x(n, 1.0f), y(n, 2.0f);
  RunTimes t;
  const HostClock total;
  tutorial::EventTimer kernel;
  kernel.start();
  launch_add(n, x.data(), y.data());
  kernel.stop();
  CUDA_CHECK(cudaDeviceSynchronize());  // the CPU may read y only once the kernel is done
  t.max_error = tutorial::max_abs_error_from(y.data(), 3.0, n);
  t.total_ms = total.elapsed_ms();
  t.kernel_ms = kernel.elapsed_ms();
  return t;
}

// 2. Managed memory, prefetched. cudaMemPrefetchAsync moves the pages in bulk, as
// steps in the stream, so the kernel finds its data in GPU memory and the CPU finds
// the result in host memory: no page faults on either side.
RunTimes managed_prefetched(size_t n, int device) {
  ManagedBuffer<float> x(n, 1.0f), y(n, 2.0f);
  RunTimes t;
  const HostClock total;
  tutorial::EventTimer to_gpu, kernel, to_host;
  // [excerpt:prefetched]
  to_gpu.start();
  prefetch(x.data(), x.bytes(), device);
  prefetch(y.data(), y.bytes(), device);
  to_gpu.stop();
  kernel.start();
  launch_add(n, x.data(), y.data());
  kernel.stop();
  to_host.start();
  prefetch(y.data(), y.bytes(), cudaCpuDeviceId);
  to_host.stop();
  // [/excerpt:prefetched]
  CUDA_CHECK(cudaDeviceSynchronize());
  t.max_error = tutorial::max_abs_error_from(y.data(), 3.0, n);
  t.total_ms = total.elapsed_ms();
  t.to_gpu_ms = to_gpu.elapsed_ms();
  t.kernel_ms = kernel.elapsed_ms();
  t.to_host_ms = to_host.elapsed_ms();
  return t;
}

// 3. Managed memory kept in host memory. "Preferred location: host" keeps the pages
// there; "accessed by: this GPU" maps them into the GPU's page tables up front. The
// kernel then reads and writes host memory across the link (PCIe or NVLink) with no
// page faults and no migration: each byte crosses once, and the result is already
// where the CPU reads it.
RunTimes managed_kept_on_host(size_t n, int device) {
  const size_t bytes = n * sizeof(float);
  ManagedBuffer<float> x(n, 1.0f), y(n, 2.0f);
  RunTimes t;
  const HostClock total;
  // [excerpt:kept-on-host]
  for (float* array : {x.data(), y.data()}) {
    advise(array, bytes, cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId);
    advise(array, bytes, cudaMemAdviseSetAccessedBy, device);
  }
  // [/excerpt:kept-on-host]
  tutorial::EventTimer kernel;
  kernel.start();
  launch_add(n, x.data(), y.data());
  kernel.stop();
  CUDA_CHECK(cudaDeviceSynchronize());
  t.max_error = tutorial::max_abs_error_from(y.data(), 3.0, n);
  t.total_ms = total.elapsed_ms();
  t.kernel_ms = kernel.elapsed_ms();
  return t;
}

// 4 and 5. Explicit memory: separate host and device arrays and cudaMemcpy between
// them. host_x and host_y hold x = 1 and y = 2, in pageable or in pinned memory.
// y is both input and output: an element that the kernel or a copy missed still
// reads 2 and fails the check, so there is nothing to poison.
RunTimes explicit_copies(size_t n, const float* host_x, float* host_y) {
  const size_t bytes = n * sizeof(float);
  tutorial::DeviceBuffer<float> x(n), y(n);
  RunTimes t;
  const HostClock total;
  tutorial::EventTimer to_gpu, kernel, to_host;
  to_gpu.start();
  // [excerpt:copies-in]
  CUDA_CHECK(cudaMemcpy(x.data(), host_x, bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(y.data(), host_y, bytes, cudaMemcpyHostToDevice));
  // [/excerpt:copies-in]
  to_gpu.stop();
  kernel.start();
  launch_add(n, x.data(), y.data());
  kernel.stop();
  to_host.start();
  // cudaMemcpy waits for the kernel before it copies, and returns when the copy is done.
  CUDA_CHECK(cudaMemcpy(host_y, y.data(), bytes, cudaMemcpyDeviceToHost));
  to_host.stop();
  t.max_error = tutorial::max_abs_error_from(host_y, 3.0, n);
  t.total_ms = total.elapsed_ms();
  t.to_gpu_ms = to_gpu.elapsed_ms();
  t.kernel_ms = kernel.elapsed_ms();
  t.to_host_ms = to_host.elapsed_ms();
  return t;
}

// One way of doing the add, and what to print where it has no separate step.
struct Approach {
  std::string name;
  std::string to_gpu_instead;   // shown when there is no separate move to the GPU
  std::string to_host_instead;  // shown when there is no separate move back
  std::function<RunTimes()> run;
};

// The medians of every timed run of one approach, and the worst error of all runs.
struct Summary {
  Approach approach;
  double to_gpu_ms, kernel_ms, to_host_ms, total_ms, max_error;
};

// Runs the approach once untimed (warm-up: module loading, allocator caches, clocks),
// then `runs` times, and checks every run.
Summary measure(const Approach& approach, int runs) {
  double worst = approach.run().max_error;
  std::vector<double> to_gpu, kernel, to_host, total;
  for (int r = 0; r < runs; ++r) {
    const RunTimes t = approach.run();
    worst = worst_of(worst, t.max_error);
    if (!std::isnan(t.to_gpu_ms)) to_gpu.push_back(t.to_gpu_ms);
    if (!std::isnan(t.to_host_ms)) to_host.push_back(t.to_host_ms);
    kernel.push_back(t.kernel_ms);
    total.push_back(t.total_ms);
  }
  return {approach, median_ms(to_gpu), median_ms(kernel), median_ms(to_host), median_ms(total), worst};
}

std::string time_or(double ms, const std::string& instead) {
  return std::isnan(ms) ? instead : tutorial::format_time(ms);
}

// Chapter 01's kernel on fresh managed arrays that the CPU has just written, timed by CUDA
// events around the kernel alone: with `prefetch`, the pages are moved to the GPU first (and
// the kernel finds them there); without, the kernel faults them in itself.
double chapter01_kernel_ms(int n, bool prefetched, int device, double& worst) {
  ManagedBuffer<float> x(n, 1.0f), y(n, 2.0f);
  if (prefetched) {
    prefetch(x.data(), x.bytes(), device);
    prefetch(y.data(), y.bytes(), device);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  tutorial::EventTimer kernel;
  kernel.start();
  add_chapter01<<<1, 1>>>(n, x.data(), y.data());
  CUDA_CHECK_LAUNCH();
  kernel.stop();
  CUDA_CHECK(cudaDeviceSynchronize());
  worst = worst_of(worst, tutorial::max_abs_error_from(y.data(), 3.0, n));
  return kernel.elapsed_ms();
}

// How much of chapter 01's time was page faults: its kernel on first-touch and on prefetched
// pages, at chapter 01's size, the two interleaved run by run so that both see the same GPU.
void chapter01_page_faults(size_t n, int device, tutorial::Verifier& verifier) {
  constexpr int kRuns = 3;  // ~90 ms a run: three of each, after one warm-up of each
  const int elements = static_cast<int>(std::min<size_t>(n, 1 << 20));
  double worst_first = 0, worst_prefetched = 0;
  chapter01_kernel_ms(elements, false, device, worst_first);
  chapter01_kernel_ms(elements, true, device, worst_prefetched);
  std::vector<double> first_touch, prefetched;
  for (int r = 0; r < kRuns; ++r) {
    first_touch.push_back(chapter01_kernel_ms(elements, false, device, worst_first));
    prefetched.push_back(chapter01_kernel_ms(elements, true, device, worst_prefetched));
  }
  const double first_ms = median_ms(first_touch), prefetched_ms = median_ms(prefetched);
  std::printf("\nChapter 01's kernel, add<<<1, 1>>> (one thread, int index), on %d floats: the median\n"
              "of %d runs each, interleaved, CUDA events around the kernel alone.\n",
              elements, kRuns);
  verifier.exact("chapter 01's kernel on first-touch pages: every element 3, all runs", worst_first);
  verifier.exact("chapter 01's kernel on prefetched pages: every element 3, all runs", worst_prefetched);
  std::printf("  on managed memory, first touch: %s\n", tutorial::format_time(first_ms).c_str());
  std::printf("  on managed memory, prefetched:  %s\n", tutorial::format_time(prefetched_ms).c_str());
  std::printf("  page faults added:              %s\n",
              tutorial::format_time(first_ms - prefetched_ms).c_str());
  verifier.figure("chapter01_first_touch_ms", std::round(first_ms * 10) / 10);
  verifier.figure("chapter01_prefetched_ms", std::round(prefetched_ms * 10) / 10);
  verifier.figure("chapter01_fault_ms", std::round((first_ms - prefetched_ms) * 10) / 10);
}

}  // namespace

void add_five_ways(size_t n, int runs, int device, bool concurrent_access,
                   tutorial::Verifier& verifier) {
  std::vector<Approach> approaches;
  approaches.push_back({"managed, first touch", "in the kernel (GPU page faults)",
                        "as the CPU reads it (CPU page faults)", [&] { return managed_first_touch(n); }});
  if (concurrent_access) {
    approaches.push_back({"managed, prefetched", "", "",
                          [&] { return managed_prefetched(n, device); }});
    approaches.push_back({"managed, advised to stay on the host", "none: read across the link",
                          "none: written across the link",
                          [&] { return managed_kept_on_host(n, device); }});
  }
  approaches.push_back({"explicit, pageable host memory", "", "", [&] {
                          std::vector<float> x(n, 1.0f), y(n, 2.0f);
                          return explicit_copies(n, x.data(), y.data());
                        }});
  approaches.push_back({"explicit, pinned host memory", "", "", [&] {
                          PinnedBuffer<float> x(n, 1.0f), y(n, 2.0f);
                          return explicit_copies(n, x.data(), y.data());
                        }});

  std::printf(
      "\n1. y = x + y on %zu floats (x = 1, y = 2, so every result is 3), %zu ways.\n"
      "Each of the %d timed runs (after one warm-up) starts from freshly allocated arrays that\n"
      "the CPU has just written, and frees them at the end: every run pays the whole cost of\n"
      "its approach, page faults included. kernel, to GPU, to host: CUDA events around that\n"
      "step alone. total: host clock from the inputs in host memory to the CPU having checked\n"
      "every result (allocating and filling the arrays is not included).\n",
      n, approaches.size(), runs);

  std::vector<Summary> results;
  for (const Approach& approach : approaches) {
    results.push_back(measure(approach, runs));
    verifier.exact(approach.name + ": every element 3, all runs", results.back().max_error);
  }
  double fastest_kernel = results.front().kernel_ms;
  for (const Summary& s : results) fastest_kernel = std::min(fastest_kernel, s.kernel_ms);

  tutorial::Table table(
      {"approach", "inputs to GPU", "kernel", "result to host", "total", "kernel vs fastest"});
  for (const Summary& s : results)
    table.add_row({s.approach.name, time_or(s.to_gpu_ms, s.approach.to_gpu_instead),
                   tutorial::format_time(s.kernel_ms),
                   time_or(s.to_host_ms, s.approach.to_host_instead),
                   tutorial::format_time(s.total_ms),
                   tutorial::format("%.1fx", s.kernel_ms / fastest_kernel)});
  std::printf("\n");
  table.print();
  if (!concurrent_access)
    std::printf("(prefetch and advice skipped: this device has concurrentManagedAccess = 0)\n");

  // The README's figures, rounded as it shows them.
  const Summary& first_touch = results.front();
  verifier.figure("first_touch_kernel_ms", std::round(first_touch.kernel_ms * 100) / 100);
  if (concurrent_access) {  // results[1] is the prefetched way
    verifier.figure("prefetched_kernel_us", std::round(results[1].kernel_ms * 1e4) / 10);
    verifier.figure("first_touch_slowdown", std::round(first_touch.kernel_ms / results[1].kernel_ms));
  }
  double total_min_ms = first_touch.total_ms, total_max_ms = first_touch.total_ms;
  for (const Summary& s : results) {
    total_min_ms = std::min(total_min_ms, s.total_ms);
    total_max_ms = std::max(total_max_ms, s.total_ms);
  }
  verifier.figure("total_min_ms", std::round(total_min_ms * 100) / 100);
  verifier.figure("total_max_ms", std::round(total_max_ms * 100) / 100);
  if (concurrent_access) chapter01_page_faults(n, device, verifier);
}

}  // namespace chapter02
