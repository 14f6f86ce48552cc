// Chapter 02: where the data lives, and what moving it costs.
//
// The add of chapter 01 (y = x + y with x = 1 and y = 2, so every result is
// exactly 3), done five ways on the same data, each verified and timed:
//   1. managed memory, first touch: the GPU page-faults the data in during the kernel;
//   2. managed memory, prefetched to the GPU before the kernel and back after it;
//   3. managed memory advised to stay in host memory: the GPU reads it across the link;
//   4. cudaMalloc + cudaMemcpy from pageable host memory (new, malloc, std::vector);
//   5. cudaMalloc + cudaMemcpy from pinned host memory (cudaMallocHost).
// Then read-mostly advice for an input that the CPU and the GPU both read, and the
// bandwidth of each way of moving data between host and GPU.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <tutorial/buffer.cuh>
#include <tutorial/check.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>

#include "memory_kinds.cuh"

using chapter02::ManagedBuffer;
using chapter02::PinnedBuffer;

// One thread per element, in blocks of 256: plenty of threads for this lesson.
// Chapter 03 is about choosing the launch configuration.
__global__ void add(size_t n, const float* x, float* y) {
  const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = x[i] + y[i];
}

void launch_add(size_t n, const float* x, float* y) {
  constexpr unsigned kThreads = 256;
  const unsigned blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  add<<<blocks, kThreads>>>(n, x, y);
  CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------
// What the device says about managed memory

struct ManagedMemorySupport {
  bool concurrent_access = false;  // the GPU can page-fault on managed memory
  bool pageable_access = false;    // kernels can use malloc/new memory
};

int device_attribute(cudaDeviceAttr attribute, int device) {
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

ManagedMemorySupport describe_managed_memory(int device) {
  ManagedMemorySupport s;
  s.concurrent_access = device_attribute(cudaDevAttrConcurrentManagedAccess, device) != 0;
  s.pageable_access = device_attribute(cudaDevAttrPageableMemoryAccess, device) != 0;
  const int host_page_tables =
      device_attribute(cudaDevAttrPageableMemoryAccessUsesHostPageTables, device);
  const int host_reads_in_place = device_attribute(cudaDevAttrDirectManagedMemAccessFromHost, device);

  std::printf("\nManaged memory on this device (cudaDeviceGetAttribute):\n");
  std::printf("  concurrentManagedAccess = %d: %s\n", s.concurrent_access,
              s.concurrent_access
                  ? "the GPU can page-fault, so managed pages migrate on demand to whichever "
                    "processor touches them, and prefetch and advice work. The CPU may touch "
                    "managed memory while kernels run, but must synchronize before it reads "
                    "their results."
                  : "no GPU page faults (Windows, WSL, pre-Pascal GPUs): every launch first "
                    "moves all managed memory to the GPU, and the CPU must not touch managed "
                    "memory until the GPU is idle. Prefetch and advice need page faults, so "
                    "the parts that use them are skipped.");
  std::printf("  pageableMemoryAccess = %d: %s\n", s.pageable_access,
              s.pageable_access
                  ? "kernels can also use ordinary host memory from malloc/new (HMM on Linux "
                    "with NVIDIA's open kernel modules, or ATS on Grace Hopper)."
                  : "kernels can use only cudaMalloc, managed and pinned memory: a pointer "
                    "from malloc/new handed to a kernel is an illegal address.");
  std::printf("  pageableMemoryAccessUsesHostPageTables = %d: %s\n", host_page_tables,
              host_page_tables ? "the GPU reads the CPU's page tables in hardware (ATS)."
                               : "no hardware translation through the CPU's page tables.");
  std::printf("  directManagedMemAccessFromHost = %d: %s\n", host_reads_in_place,
              host_reads_in_place
                  ? "the CPU reads managed pages in GPU memory in place, without migrating them."
                  : "a CPU access to a managed page in GPU memory migrates the page back to "
                    "host memory (a CPU page fault).");
  return s;
}

// ---------------------------------------------------------------------------
// Part 1: the same add, five ways

// What one run of one approach measured, in milliseconds. NaN: not a step of its own.
struct RunTimes {
  double to_gpu_ms = NAN;   // moving the inputs to the GPU (CUDA events)
  double kernel_ms = NAN;   // the kernel alone (CUDA events)
  double to_host_ms = NAN;  // moving the result back to host memory (CUDA events)
  double total_ms = NAN;    // host clock: inputs in host memory -> every result checked by the CPU
  double max_error = NAN;   // worst |y - 3|
};

// Host wall-clock time, for what CUDA events cannot see: when the CPU reads managed
// memory, its page faults and the migrations they trigger happen outside any stream.
class HostClock {
 public:
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
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
  to_gpu.start();
  chapter02::prefetch(x.data(), x.bytes(), device);
  chapter02::prefetch(y.data(), y.bytes(), device);
  to_gpu.stop();
  kernel.start();
  launch_add(n, x.data(), y.data());
  kernel.stop();
  to_host.start();
  chapter02::prefetch(y.data(), y.bytes(), cudaCpuDeviceId);
  to_host.stop();
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
  for (float* array : {x.data(), y.data()}) {
    chapter02::advise(array, bytes, cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId);
    chapter02::advise(array, bytes, cudaMemAdviseSetAccessedBy, device);
  }
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
  CUDA_CHECK(cudaMemcpy(x.data(), host_x, bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(y.data(), host_y, bytes, cudaMemcpyHostToDevice));
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

// The worse of two errors; NaN is worse than any number.
double worst_of(double a, double b) {
  return (std::isnan(a) || std::isnan(b)) ? NAN : std::max(a, b);
}

// Median of the samples in milliseconds, or NaN if there are none.
double median_ms(const std::vector<double>& samples) {
  return samples.empty() ? NAN : tutorial::summarize(samples).median_ms;
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

// ---------------------------------------------------------------------------
// Part 2: read-mostly advice for an input that the CPU and the GPU both read

// Medians over the rounds, and the worst error of every check.
struct RoundTimes {
  double kernel_ms, cpu_read_ms, max_error;
};

// Round after round, the GPU adds (y += x) and then the CPU reads all of x. Without
// advice the CPU's read migrates x back to host memory and the next kernel faults it
// in again: x ping-pongs across the link every round. With cudaMemAdviseSetReadMostly
// each processor keeps its own read-only copy of x and nothing moves after the start.
RoundTimes shared_input_rounds(size_t n, int rounds, bool read_mostly, int device) {
  ManagedBuffer<float> x(n, 1.0f), y(n, 2.0f);
  if (read_mostly)  // the location argument is ignored for this advice
    chapter02::advise(x.data(), x.bytes(), cudaMemAdviseSetReadMostly, device);
  chapter02::prefetch(x.data(), x.bytes(), device);
  chapter02::prefetch(y.data(), y.bytes(), device);
  CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<double> kernel_ms, cpu_read_ms;
  double worst = 0.0;
  tutorial::EventTimer kernel;
  for (int r = 0; r < rounds; ++r) {
    kernel.start();
    launch_add(n, x.data(), y.data());
    kernel.stop();
    CUDA_CHECK(cudaDeviceSynchronize());
    kernel_ms.push_back(kernel.elapsed_ms());
    const HostClock cpu_read;
    worst = worst_of(worst, tutorial::max_abs_error_from(x.data(), 1.0, n));  // x is still all 1
    cpu_read_ms.push_back(cpu_read.elapsed_ms());
  }
  // After `rounds` adds of 1 to 2, y is 2 + rounds: a small integer, exact in float.
  worst = worst_of(worst, tutorial::max_abs_error_from(y.data(), 2.0 + rounds, n));
  return {median_ms(kernel_ms), median_ms(cpu_read_ms), worst};
}

// ---------------------------------------------------------------------------
// Part 3: bandwidth between host and GPU

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
    chapter02::prefetch(data.data(), data.bytes(), device);
    to_gpu.stop();
    to_host.start();
    chapter02::prefetch(data.data(), data.bytes(), cudaCpuDeviceId);
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

// ---------------------------------------------------------------------------

int main(int argc, char** argv) {
  tutorial::Cli cli("02_unified_memory",
                    "The same add (y = x + y) with managed memory (first touch, prefetched, "
                    "advised) and with explicit copies\nfrom pageable and pinned memory, each "
                    "verified and timed; then read-mostly advice and host<->GPU bandwidth.");
  cli.add_int("n", "elements of x and y in the add", 1 << 20, 1, 1LL << 35);
  cli.add_int("transfer-n", "floats moved in the bandwidth test", 1 << 26, 1, 1LL << 35);
  cli.add_int("runs", "timed runs per measurement (the median is shown)", 20, 1, 1000);
  cli.parse_or_exit(argc, argv);
  const size_t n = static_cast<size_t>(cli.get_int("n"));
  const size_t transfer_n = static_cast<size_t>(cli.get_int("transfer-n"));
  const int runs = static_cast<int>(cli.get_int("runs"));
  const size_t bytes = n * sizeof(float);
  const size_t transfer_bytes = transfer_n * sizeof(float);

  const tutorial::DeviceInfo gpu = tutorial::require_gpu();
  // Check every size before allocating anything. Managed memory is not limited by the
  // GPU's memory: more than is free oversubscribes the GPU, and pages are evicted and
  // faulted back in, endlessly. That can stall the GPU for minutes, so it is refused.
  tutorial::require_device_memory(2 * bytes, "The add (x and y, --n floats each)");
  tutorial::require_device_memory(2 * transfer_bytes,
                                  "The bandwidth test (two buffers of --transfer-n floats)");
  chapter02::require_host_memory(2 * bytes, "The add (x and y, --n floats each)");
  chapter02::require_host_memory(transfer_bytes, "The bandwidth test (--transfer-n floats)");

  const ManagedMemorySupport support = describe_managed_memory(gpu.id);
  tutorial::Verifier verifier;

  // Part 1 ------------------------------------------------------------------
  std::vector<Approach> approaches;
  approaches.push_back({"managed, first touch", "in the kernel (GPU page faults)",
                        "as the CPU reads it (CPU page faults)", [&] { return managed_first_touch(n); }});
  if (support.concurrent_access) {
    approaches.push_back({"managed, prefetched", "", "",
                          [&] { return managed_prefetched(n, gpu.id); }});
    approaches.push_back({"managed, advised to stay on the host", "none: read across the link",
                          "none: written across the link",
                          [&] { return managed_kept_on_host(n, gpu.id); }});
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

  tutorial::Table add_table(
      {"approach", "inputs to GPU", "kernel", "result to host", "total", "kernel vs fastest"});
  for (const Summary& s : results)
    add_table.add_row({s.approach.name, time_or(s.to_gpu_ms, s.approach.to_gpu_instead),
                       tutorial::format_time(s.kernel_ms),
                       time_or(s.to_host_ms, s.approach.to_host_instead),
                       tutorial::format_time(s.total_ms),
                       tutorial::format("%.1fx", s.kernel_ms / fastest_kernel)});
  std::printf("\n");
  add_table.print();
  if (!support.concurrent_access)
    std::printf("(prefetch and advice skipped: this device has concurrentManagedAccess = 0)\n");

  // Part 2 ------------------------------------------------------------------
  if (support.concurrent_access) {
    std::printf(
        "\n2. %d rounds of: the GPU adds (y += x), then the CPU reads all of x (%zu floats).\n"
        "Both arrays are prefetched to the GPU first. Medians over the rounds.\n",
        runs, n);
    const RoundTimes plain = shared_input_rounds(n, runs, false, gpu.id);
    verifier.exact("rounds without advice: x all 1, y = 2 + rounds", plain.max_error);
    const RoundTimes read_mostly = shared_input_rounds(n, runs, true, gpu.id);
    verifier.exact("rounds with read-mostly x: x all 1, y = 2 + rounds", read_mostly.max_error);

    tutorial::Table round_table({"advice on x", "kernel per round", "CPU reads x per round"});
    round_table.add_row({"none: x migrates back and forth", tutorial::format_time(plain.kernel_ms),
                         tutorial::format_time(plain.cpu_read_ms)});
    round_table.add_row({"cudaMemAdviseSetReadMostly: a copy on each side",
                         tutorial::format_time(read_mostly.kernel_ms),
                         tutorial::format_time(read_mostly.cpu_read_ms)});
    std::printf("\n");
    round_table.print();
  }

  // Part 3 ------------------------------------------------------------------
  std::printf("\n3. Moving %zu floats (%.0f MiB) between host and GPU, median of %d runs.\n",
              transfer_n, transfer_bytes / double(1 << 20), runs);
  Bandwidth pageable, pinned;
  {
    std::vector<float> host(transfer_n);
    pageable = memcpy_bandwidth(host.data(), transfer_n, runs);
  }
  verifier.exact("cudaMemcpy round trip, pageable host memory", pageable.max_error);
  {
    PinnedBuffer<float> host(transfer_n, 0.0f);
    pinned = memcpy_bandwidth(host.data(), transfer_n, runs);
  }
  verifier.exact("cudaMemcpy round trip, pinned host memory", pinned.max_error);

  tutorial::Table transfer_table({"how", "host to GPU", "GPU to host", "host to GPU vs pinned"});
  transfer_table.add_row({"cudaMemcpy, pageable host memory", gbs(pageable.to_gpu_gbs),
                          gbs(pageable.to_host_gbs),
                          tutorial::format("%.2fx", pageable.to_gpu_gbs / pinned.to_gpu_gbs)});
  transfer_table.add_row({"cudaMemcpy, pinned host memory", gbs(pinned.to_gpu_gbs),
                          gbs(pinned.to_host_gbs), "1.00x"});
  if (support.concurrent_access) {
    const Bandwidth migrated = prefetch_bandwidth(transfer_n, gpu.id, runs);
    verifier.exact("cudaMemPrefetchAsync round trip, managed memory", migrated.max_error);
    transfer_table.add_row({"cudaMemPrefetchAsync, managed memory", gbs(migrated.to_gpu_gbs),
                            gbs(migrated.to_host_gbs),
                            tutorial::format("%.2fx", migrated.to_gpu_gbs / pinned.to_gpu_gbs)});
  }
  std::printf("\n");
  transfer_table.print();

  // The same bytes copied within GPU memory, for scale. copy_bandwidth_gbs counts bytes
  // read plus bytes written; the time it implies is what compares with the link.
  tutorial::TimingPlan plan;
  plan.runs = runs;
  const double on_gpu_gbs = tutorial::copy_bandwidth_gbs(transfer_bytes, plan);
  const double on_gpu_ms = 2.0 * transfer_bytes / (on_gpu_gbs * 1e6);
  const double pinned_ms = transfer_bytes / (pinned.to_gpu_gbs * 1e6);
  std::printf(
      "\nFor scale: copying the same %.0f MiB within GPU memory took %s (%.0f GB/s, bytes read +\n"
      "written), against %s from pinned host memory: %.0fx faster. Data that stays on the GPU\n"
      "is that much cheaper to reach.\n",
      transfer_bytes / double(1 << 20), tutorial::format_time(on_gpu_ms).c_str(), on_gpu_gbs,
      tutorial::format_time(pinned_ms).c_str(), pinned_ms / on_gpu_ms);

  return verifier.exit_code();
}
