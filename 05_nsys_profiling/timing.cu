// Chapter 05, part 2: timing a short kernel honestly, and which calls wait for the GPU.
//
//  1. One short kernel (add on 2^16 floats: a microsecond or two) timed five ways, from an
//     event pair around each launch to a CUDA graph of many launches between one pair.
//  2. Which calls make the CPU wait for a running kernel.
//  3. --fault-demo: a kernel writes through a null pointer; which call reports it? The error
//     ruins this process's CUDA context, so CTest runs it as a program of its own, without
//     and with CUDA_LAUNCH_BLOCKING=1 (tests/fault_demo.sh).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <tutorial/buffer.cuh>
#include <tutorial/check.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>

// y = x + y, grid-stride, with a size_t index (chapter 03: an int overflows past 2^31).
__global__ void add(size_t n, const float* x, float* y) {
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = x[i] + y[i];
}

// Busy-waits for \p cycles SM clock cycles, then sets *done if given: a kernel whose length
// we choose, and a result that exists only once it has ended.
__global__ void spin(long long cycles, int* done = nullptr) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (done) *done = 1;
}

__global__ void set_to(int* p, int value) { *p = value; }

// Writes through \p p. Given nullptr the write faults, but only when the kernel runs.
__global__ void write_through(float* p) { *p = 1.0f; }

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}
double median(std::vector<double> samples) { return tutorial::summarize(std::move(samples)).median_ms; }
// A figure as the README shows it: three significant digits.
double sig3(double value) { return std::stod(tutorial::format("%.3g", value)); }

// The short kernel on one stream; counts its launches, so that y = 2 + launches at the end.
struct ShortAdd {
  size_t n;
  const float* x;
  float* y;
  cudaStream_t stream;
  long long launches = 0;

  void launch() {
    add<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(n, x, y);
    CUDA_CHECK_LAUNCH();
    ++launches;
  }
};

// (a) One event pair around each launch, waited for at once: CUDA events with nothing in
// between. The stream is idle at cudaEventRecord(start), so the GPU stamps it at once and
// then waits for the launch to arrive: each sample holds that trip as well as the kernel.
double pair_per_launch(ShortAdd& work, int runs) {
  // [excerpt:raw-events]
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> samples;
  for (int i = 0; i < runs; ++i) {
    CUDA_CHECK(cudaEventRecord(start, work.stream));  // into the stream, like a kernel
    work.launch();
    CUDA_CHECK(cudaEventRecord(stop, work.stream));
    CUDA_CHECK(cudaEventSynchronize(stop));  // the CPU waits until the GPU has passed stop
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));  // GPU time between the two stamps
    samples.push_back(ms);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  // [/excerpt:raw-events]
  return median(samples);
}

// [excerpt:queued]
// (b) Every pair queued first, one synchronize at the end: a start event is stamped when the
// kernel before it ends, while the CPU queues faster than the GPU runs. (tutorial::time_gpu)
double queued_pairs(ShortAdd& work, int runs, double& queue_one_ms) {
  std::vector<tutorial::EventTimer> timers(runs);
  const Clock::time_point start = Clock::now();
  for (tutorial::EventTimer& timer : timers) {
    timer.start(work.stream);
    work.launch();
    timer.stop(work.stream);
  }
  queue_one_ms = ms_since(start) / runs;
  std::vector<double> samples;
  for (const tutorial::EventTimer& timer : timers) samples.push_back(timer.elapsed_ms());
  return median(samples);
}
// [/excerpt:queued]

// [excerpt:batch]
// (c) \p batch launches between one pair, per launch; median of 5. With \p hold_cycles > 0
// the batch waits behind a spin kernel, so the CPU has queued it all before the first add.
double batched(ShortAdd& work, int batch, long long hold_cycles, double& queue_one_ms) {
  tutorial::EventTimer timer;
  std::vector<double> samples, queue_samples;
  for (int rep = 0; rep < 5; ++rep) {
    if (hold_cycles > 0) {
      spin<<<1, 1, 0, work.stream>>>(hold_cycles);
      CUDA_CHECK_LAUNCH();
    }
    const Clock::time_point start = Clock::now();
    timer.start(work.stream);
    for (int i = 0; i < batch; ++i) work.launch();
    timer.stop(work.stream);
    queue_samples.push_back(ms_since(start) / batch);
    samples.push_back(timer.elapsed_ms() / batch);
  }
  queue_one_ms = median(queue_samples);
  return median(samples);
}
// [/excerpt:batch]

// [excerpt:graph]
// (d) The batch captured once into a CUDA graph: one cudaGraphLaunch sends every kernel to
// the GPU, so the CPU's launch pace no longer counts. Median of 5 after one warm-up (upload).
double graphed(ShortAdd& work, int batch) {
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(work.stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < batch; ++i) work.launch();  // recorded, not run
  CUDA_CHECK(cudaStreamEndCapture(work.stream, &graph));
  work.launches -= batch;
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));  // one spelling for CUDA 11.4-13
  tutorial::EventTimer timer;
  std::vector<double> samples;
  for (int rep = 0; rep < 6; ++rep) {
    timer.start(work.stream);
    CUDA_CHECK(cudaGraphLaunch(exec, work.stream));
    timer.stop(work.stream);
    if (rep > 0) samples.push_back(timer.elapsed_ms() / batch);
    work.launches += batch;
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return median(samples);
}
// [/excerpt:graph]

// Part 3: launch a faulting kernel and see which call reports it. The expected answer depends
// on CUDA_LAUNCH_BLOCKING: without it the launch returns cudaSuccess and the next call that
// waits for the GPU (cudaMemcpy) reports the error; with it the launch waits and reports it.
int fault_demo() {
  tutorial::require_gpu(false);
  const char* env = std::getenv("CUDA_LAUNCH_BLOCKING");
  const bool blocking = env && std::string(env) == "1";
  float* buffer = nullptr;
  CUDA_CHECK(cudaMalloc(&buffer, sizeof(float)));
  write_through<<<1, 1>>>(nullptr);
  const cudaError_t at_launch = cudaGetLastError();  // not CUDA_CHECK_LAUNCH: we want to see it
  float value = 0;
  const cudaError_t at_copy = cudaMemcpy(&value, buffer, sizeof value, cudaMemcpyDeviceToHost);
  std::printf("CUDA_LAUNCH_BLOCKING=%s\n", env ? env : "(not set)");
  std::printf("write_through<<<1, 1>>>(nullptr), then cudaGetLastError(): %s\n", cudaGetErrorName(at_launch));
  std::printf("the next call, cudaMemcpy device -> host: %s\n", cudaGetErrorName(at_copy));
  const char* reported_by = at_launch != cudaSuccess ? "the launch" : at_copy != cudaSuccess ? "cudaMemcpy" : "none";
  std::printf("Reported by: %s\n", reported_by);
  tutorial::Verifier verifier;
  verifier.expect(std::string("the error is reported by ") + (blocking ? "the launch" : "cudaMemcpy"),
                  std::string(reported_by) == (blocking ? "the launch" : "cudaMemcpy"));
  // No cudaFree: after an illegal address every call fails; the process exit frees it all.
  return verifier.finish("05_timing --fault-demo");
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("05_timing",
                    "Times one short kernel five ways (an event pair per launch, queued pairs, a batch, a batch\n"
                    "behind a busy GPU, a CUDA graph) and measures which calls wait for a running kernel.");
  cli.add_int("n", "elements of the short add (2^16: a microsecond or two)", 1 << 16, 1, 1 << 24);
  cli.add_int("runs", "event-pair samples for methods (a) and (b)", 200, 1, 10000);
  cli.add_int("batch", "launches between one event pair, and in the CUDA graph, for (c) and (d)", 1000, 1, 100000);
  cli.add_flag("fault-demo", "part 3 only: launch a faulting kernel and report which call sees the error");
  cli.parse_or_exit(argc, argv);
  if (cli.get_flag("fault-demo")) return fault_demo();
  const size_t n = static_cast<size_t>(cli.get_int("n"));
  const int runs = static_cast<int>(cli.get_int("runs"));
  const int batch = static_cast<int>(cli.get_int("batch"));

  const tutorial::DeviceInfo device = tutorial::require_gpu();
  const char* env = std::getenv("CUDA_LAUNCH_BLOCKING");
  std::printf("CUDA_LAUNCH_BLOCKING=%s\n", env ? env : "(not set)");
  tutorial::Verifier verifier;
  int clock_khz = 0;  // SM cycles per millisecond, to give the spin kernel a length in time
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device.id));
  auto cycles = [&](double ms) { return static_cast<long long>(ms * clock_khz); };

  // --- Part 1: one short kernel, five ways ---
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));  // capture needs a stream of our own
  tutorial::DeviceBuffer<float> x(n), y(n);
  x.upload(std::vector<float>(n, 1.0f));
  y.upload(std::vector<float>(n, 2.0f));
  ShortAdd work{n, x.data(), y.data(), stream};
  for (int i = 0; i < 10; ++i) work.launch();  // warm-up: module load, clocks
  CUDA_CHECK(cudaStreamSynchronize(stream));

  const double hold_ms = 0.02 * batch;  // 20 us per queued launch: far longer than queueing one
  double queue_sample_ms = 0, queue_launch_ms = 0, unused_ms = 0;
  const double a = pair_per_launch(work, runs);
  const double b = queued_pairs(work, runs, queue_sample_ms);
  const double c = batched(work, batch, 0, queue_launch_ms);
  const double c_held = batched(work, batch, cycles(hold_ms), unused_ms);
  const double d = graphed(work, batch);
  const std::vector<float> result = y.download();
  verifier.exact(tutorial::format("add, %lld launches: y = 2 + launches", work.launches),
                 tutorial::max_abs_error_from(result.data(), 2.0 + work.launches, n));

  std::printf("\nPart 1. add<<<%zu, 256>>> on %zu floats, timed five ways (medians, per launch):\n\n",
              (n + 255) / 256, n);
  tutorial::Table table({"Method", "Per launch", "vs graph", "What a sample holds"});
  auto row = [&](const std::string& method, double ms, const char* holds) {
    table.add_row({method, tutorial::format_time(ms), tutorial::format("%.2fx", ms / d), holds});
  };
  row("(a) event pair per launch, synchronized", a, "launch latency + kernel");
  row("(b) every event pair queued, one synchronize", b, "the CPU's pace, where slower than the GPU");
  row(tutorial::format("(c) %d launches between one event pair", batch), c, "the CPU's pace, where slower than the GPU");
  row("(c) the same, queued behind a " + tutorial::format_time(hold_ms) + " spin", c_held, "kernel + gap between launches");
  row(tutorial::format("(d) CUDA graph of %d launches", batch), d, "kernel + the graph's gap between kernels");
  table.print();
  std::printf("\nThe CPU queued one sample (event, launch, event) every %s, one launch every %s.\n",
              tutorial::format_time(queue_sample_ms).c_str(), tutorial::format_time(queue_launch_ms).c_str());
  verifier.figure("sync_each_us", sig3(a * 1e3));
  verifier.figure("queued_us", sig3(b * 1e3));
  verifier.figure("batch_us", sig3(c * 1e3));
  verifier.figure("batch_held_us", sig3(c_held * 1e3));
  verifier.figure("graph_us", sig3(d * 1e3));
  verifier.figure("queue_one_sample_us", sig3(queue_sample_ms * 1e3));
  verifier.figure("queue_one_launch_us", sig3(queue_launch_ms * 1e3));
  verifier.figure("sync_each_vs_graph", sig3(a / d));

  // --- Part 2: which calls wait for a running kernel ---
  // Each row: an idle GPU, a spin kernel of about 1 ms, then one call, timed on the CPU.
  const long long spin_cycles = cycles(1.0);
  tutorial::DeviceBuffer<int> done(1);  // 0 until the spin kernel ends
  auto after_spin = [&](auto&& call) {
    CUDA_CHECK(cudaMemset(done.data(), 0, sizeof(int)));
    CUDA_CHECK(cudaDeviceSynchronize());
    spin<<<1, 1>>>(spin_cycles, done.data());
    CUDA_CHECK_LAUNCH();
    const Clock::time_point start = Clock::now();
    call();
    const double ms = ms_since(start);
    CUDA_CHECK(cudaDeviceSynchronize());
    return ms;
  };
  const double spin_ms = tutorial::time_gpu([&] {
    spin<<<1, 1>>>(spin_cycles);
    CUDA_CHECK_LAUNCH();
  }).median_ms;
  const Clock::time_point launch_start = Clock::now();
  spin<<<1, 1>>>(spin_cycles);
  CUDA_CHECK_LAUNCH();
  const double launch_ms = ms_since(launch_start);
  int copied = 0, pageable = 0, *pinned = nullptr, *managed = nullptr, *spare = nullptr;
  CUDA_CHECK(cudaMallocHost(&pinned, sizeof(int)));
  CUDA_CHECK(cudaMalloc(&spare, sizeof(int)));
  std::vector<std::pair<std::string, double>> rows = {
      {"the launch call itself (spin<<<1, 1>>>)", launch_ms},
      {"cudaMemcpy device -> host, 4 bytes",
       after_spin([&] { CUDA_CHECK(cudaMemcpy(&copied, done.data(), sizeof(int), cudaMemcpyDeviceToHost)); })},
      {"cudaMemcpyAsync device -> pageable host",  // the runtime stages it through a buffer of its own
       after_spin([&] { CUDA_CHECK(cudaMemcpyAsync(&pageable, done.data(), sizeof(int), cudaMemcpyDeviceToHost)); })},
      {"cudaMemcpyAsync device -> pinned host",
       after_spin([&] { CUDA_CHECK(cudaMemcpyAsync(pinned, done.data(), sizeof(int), cudaMemcpyDeviceToHost)); })},
      {"cudaFree of another buffer", after_spin([&] { CUDA_CHECK(cudaFree(spare)); })},
      {"cudaDeviceSynchronize", after_spin([] { CUDA_CHECK(cudaDeviceSynchronize()); })},
  };
  verifier.exact("cudaMemcpy waited: it returned the value the kernel wrote as it ended", std::abs(copied - 1));
  verifier.exact("cudaMemcpyAsync to pinned memory: the value, after a synchronize", std::abs(*pinned - 1));
  CUDA_CHECK(cudaFreeHost(pinned));
  // A managed int the spin kernel does not touch, last written by the GPU: the CPU's read
  // migrates its page back while the kernel runs (allowed where concurrentManagedAccess = 1).
  int concurrent_managed = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&concurrent_managed, cudaDevAttrConcurrentManagedAccess, device.id));
  if (concurrent_managed) {
    CUDA_CHECK(cudaMallocManaged(&managed, sizeof(int)));
    set_to<<<1, 1>>>(managed, 7);
    CUDA_CHECK_LAUNCH();
    const double read_ms = after_spin([&] { pageable = *static_cast<volatile int*>(managed); });
    rows.push_back({"host read of a managed int (one the kernel does not touch)", read_ms});
    verifier.exact("host read of managed memory: the value a finished kernel wrote", std::abs(pageable - 7));
    verifier.figure("managed_read_us", sig3(read_ms * 1e3));
    CUDA_CHECK(cudaFree(managed));
  }

  std::printf("\nPart 2. Which calls wait? spin<<<1, 1>>> runs %s (CUDA events); right after launching it,\n"
              "the CPU makes one call, timed by a CPU clock:\n\n", tutorial::format_time(spin_ms).c_str());
  tutorial::Table waits({"Call after the launch", "CPU time of the call", "Waited for the kernel?"});
  for (const auto& [call, ms] : rows)
    waits.add_row({call, tutorial::format_time(ms), ms > 0.5 * spin_ms ? "yes" : "no"});
  waits.print();
  verifier.figure("spin_ms", sig3(spin_ms));
  verifier.figure("launch_call_us", sig3(launch_ms * 1e3));
  verifier.figure("memcpy_ms", sig3(rows[1].second));
  verifier.figure("memcpy_async_pageable_ms", sig3(rows[2].second));
  verifier.figure("memcpy_async_pinned_us", sig3(rows[3].second * 1e3));
  verifier.figure("free_ms", sig3(rows[4].second));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return verifier.finish("05_timing");
}
