// Chapter 05, part 2: timing a short kernel honestly, and which calls wait for the GPU.
//
//  1. One short kernel (add on 2^16 floats: a microsecond or two) timed six ways. A pair
//     of CUDA events around one launch, synchronized after every sample, also holds the
//     time the launch takes to reach the GPU; queueing every pair first removes that, as
//     long as the CPU keeps ahead of the GPU; a CUDA graph of many launches between one
//     pair comes closest to the kernel itself.
//  2. Which calls make the CPU wait for a running kernel: a blocking cudaMemcpy does (the
//     CPU time of the call is the kernel's), a host read of managed memory does not.
//  3. CUDA_LAUNCH_BLOCKING=1 makes every launch wait for its kernel. The program runs a
//     faulting kernel in two child processes of itself, without and with the variable, to
//     show where the error surfaces; run the whole program with CUDA_LAUNCH_BLOCKING=1 to
//     see what it does to the timings.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
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

// y = x + y, grid-stride: the same add as the rest of the chapter.
__global__ void add(int n, const float* x, float* y) {
  const int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = x[i] + y[i];
}

// Busy-waits for \p cycles SM clock cycles, then sets *done (if given): a kernel whose
// length we choose, and a result that exists only once it has ended.
__global__ void spin(long long cycles, int* done) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (done) *done = 1;
}

__global__ void set_to(int* p, int value) { *p = value; }

// Writes through \p p. Given nullptr, the write faults, but only when the kernel runs:
// the launch itself has nothing to object to.
__global__ void write_through(float* p) { *p = 1.0f; }

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A headline figure as the README shows it: three significant digits.
double sig3(double value) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(std::fabs(value))));
  return std::round(value * scale) / scale;
}

double median(std::vector<double> samples) { return tutorial::summarize(std::move(samples)).median_ms; }

// The short kernel, launched on one stream, counting how many adds y has seen.
struct ShortAdd {
  int n;
  const float* x;
  float* y;
  cudaStream_t stream;
  long long adds = 0;  // y = 2 + adds once the GPU has caught up

  void launch() {
    add<<<(n + 255) / 256, 256, 0, stream>>>(n, x, y);
    CUDA_CHECK_LAUNCH();
    ++adds;
  }
};

// (a) One event pair per launch, synchronized after every sample. The stream is idle when
// the start event is recorded, so the GPU stamps it at once and then waits for the
// launch to arrive: each sample holds that wait. (time_gpu() worked this way before.)
double sync_after_each(ShortAdd& work, int runs) {
  tutorial::EventTimer timer;
  std::vector<double> samples;
  for (int i = 0; i < runs; ++i) {
    timer.start(work.stream);
    work.launch();
    timer.stop(work.stream);
    samples.push_back(timer.elapsed_ms());  // waits for this sample's stop event
  }
  return median(samples);
}

// Queues a spin kernel that keeps the GPU busy for \p cycles, so that the CPU can queue
// the work behind it before any of it runs. Returns the CPU clock's start.
Clock::time_point hold_gpu(ShortAdd& work, long long cycles) {
  if (cycles > 0) {
    spin<<<1, 1, 0, work.stream>>>(cycles, nullptr);
    CUDA_CHECK_LAUNCH();
  }
  return Clock::now();
}

// (b) Every sample's event pair queued first, one synchronize at the end. A start event
// is then stamped when the work before it ends, as long as the CPU queues work faster
// than the GPU finishes it. \p hold_cycles > 0 queues it all behind a spin kernel.
// Returns the median; \p queue_ms gets the CPU time it took to queue one sample.
double queued(ShortAdd& work, int runs, long long hold_cycles, double& queue_ms) {
  std::vector<tutorial::EventTimer> timers(runs);
  const Clock::time_point start = hold_gpu(work, hold_cycles);
  for (tutorial::EventTimer& timer : timers) {
    timer.start(work.stream);
    work.launch();
    timer.stop(work.stream);
  }
  queue_ms = ms_since(start) / runs;
  CUDA_CHECK(cudaStreamSynchronize(work.stream));
  std::vector<double> samples;
  for (const tutorial::EventTimer& timer : timers) samples.push_back(timer.elapsed_ms());
  return median(samples);
}

// (c) \p batch launches between one pair of events, divided by \p batch; median of 5.
// \p hold_cycles > 0: each batch queued behind a spin kernel. \p queue_ms gets the CPU
// time it took to queue one launch.
double batched(ShortAdd& work, int batch, long long hold_cycles, double& queue_ms) {
  tutorial::EventTimer timer;
  std::vector<double> samples, queue_samples;
  for (int rep = 0; rep < 5; ++rep) {
    const Clock::time_point start = hold_gpu(work, hold_cycles);
    timer.start(work.stream);
    for (int i = 0; i < batch; ++i) work.launch();
    timer.stop(work.stream);
    queue_samples.push_back(ms_since(start) / batch);
    samples.push_back(timer.elapsed_ms() / batch);
  }
  queue_ms = median(queue_samples);
  return median(samples);
}

// (c) The same launches captured once into a CUDA graph: one cudaGraphLaunch puts all of
// them on the GPU, so the CPU's launch rate no longer matters. Median of 5, per kernel.
double graphed(ShortAdd& work, int batch) {
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(work.stream, cudaStreamCaptureModeGlobal));
  const long long before = work.adds;
  for (int i = 0; i < batch; ++i) work.launch();  // recorded into the graph, not run
  work.adds = before;
  CUDA_CHECK(cudaStreamEndCapture(work.stream, &graph));
  cudaGraphExec_t exec = nullptr;
  // WithFlags: the one spelling CUDA 11.4 to 13 share (CUDA 12 changed cudaGraphInstantiate).
  CUDA_CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));

  tutorial::EventTimer timer;
  std::vector<double> samples;
  for (int rep = 0; rep < 6; ++rep) {  // the first is a warm-up: the graph's upload
    timer.start(work.stream);
    CUDA_CHECK(cudaGraphLaunch(exec, work.stream));
    timer.stop(work.stream);
    const double ms = timer.elapsed_ms() / batch;
    if (rep > 0) samples.push_back(ms);
    work.adds += batch;
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return median(samples);
}

// One row of part 2: a call made right after launching the spin kernel, timed on the CPU.
struct WaitRow {
  const char* call;
  double cpu_ms;
};

std::string waited(double cpu_ms, double kernel_ms) {
  return cpu_ms > 0.5 * kernel_ms ? "yes" : "no";
}

// The child's side of part 3: launch a kernel that writes through a null pointer and see
// which call reports it. The context is lost after this, so it runs in its own process.
int fault_demo() {
  tutorial::require_gpu(false);
  tutorial::Verifier verifier;
  float* buffer = nullptr;
  CUDA_CHECK(cudaMalloc(&buffer, sizeof(float)));
  const char* blocking = std::getenv("CUDA_LAUNCH_BLOCKING");
  std::printf("CUDA_LAUNCH_BLOCKING=%s\n", blocking ? blocking : "(not set)");

  const Clock::time_point start = Clock::now();
  write_through<<<1, 1>>>(nullptr);
  const cudaError_t at_launch = cudaGetLastError();  // deliberately not CUDA_CHECK_LAUNCH: we want to see it
  const double launch_ms = ms_since(start);
  std::printf("write_through<<<1, 1>>>(nullptr) returned after %s; cudaGetLastError(): %s\n",
              tutorial::format_time(launch_ms).c_str(), cudaGetErrorName(at_launch));
  float value = 0;
  const cudaError_t at_copy = cudaMemcpy(&value, buffer, sizeof value, cudaMemcpyDeviceToHost);
  std::printf("the next call, cudaMemcpy device -> host: %s\n", cudaGetErrorName(at_copy));
  const char* reported_by = at_launch != cudaSuccess ? "the launch" : at_copy != cudaSuccess ? "cudaMemcpy" : "none";
  std::printf("Reported by: %s\n", reported_by);
  verifier.expect("the illegal write was reported by a CUDA call", at_launch != cudaSuccess || at_copy != cudaSuccess);
  // No cudaFree: after an illegal address every call fails; the process exit frees it all.
  return verifier.finish("05_timing --fault-demo");
}

// Runs this program again with --fault-demo and CUDA_LAUNCH_BLOCKING=\p blocking, shows
// what it printed (indented) and returns its "Reported by:" answer.
std::string run_fault_demo(const char* blocking) {
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) return "(cannot find this program: /proc/self/exe)";
  self[length] = '\0';
  const std::string command = std::string("CUDA_LAUNCH_BLOCKING=") + blocking + " '" + self + "' --fault-demo 2>&1";
  std::fflush(stdout);
  std::FILE* child = popen(command.c_str(), "r");
  if (!child) return "(could not start the child process)";
  std::string reported_by = "(no answer)";
  char line[512];
  while (std::fgets(line, sizeof line, child)) {
    std::printf(line[0] == '\n' ? "\n" : "    %s", line);
    const std::string text = line;
    const std::string key = "Reported by: ";
    if (text.rfind(key, 0) == 0) reported_by = text.substr(key.size(), text.find('\n') - key.size());
  }
  const int status = pclose(child);
  if (status != 0) std::printf("    (the child exited with status %d)\n", WEXITSTATUS(status));
  return reported_by;
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("05_timing",
                    "Times one short kernel six ways (an event pair synchronized per sample, queued pairs, a batch,\n"
                    "each also queued behind a busy GPU, and a CUDA graph), measures which calls wait for a\n"
                    "running kernel, and shows where CUDA_LAUNCH_BLOCKING=1 makes an asynchronous error surface.");
  cli.add_int("n", "elements of the short add (2^16: a microsecond or two)", 1 << 16, 1, 1 << 24);
  cli.add_int("runs", "event-pair samples for methods (a) and (b)", 200, 1, 10000);
  cli.add_int("batch", "launches between one event pair, and in the CUDA graph, for (c)", 1000, 1, 100000);
  cli.add_flag("no-fault-demo", "skip part 3 (the faulting child processes), e.g. under compute-sanitizer");
  cli.add_flag("fault-demo", "part 3's child: launch a faulting kernel in this process and report where it surfaces");
  cli.parse_or_exit(argc, argv);
  if (cli.get_flag("fault-demo")) return fault_demo();
  const int n = static_cast<int>(cli.get_int("n"));
  const int runs = static_cast<int>(cli.get_int("runs"));
  const int batch = static_cast<int>(cli.get_int("batch"));

  const tutorial::DeviceInfo device = tutorial::require_gpu();
  const char* blocking_env = std::getenv("CUDA_LAUNCH_BLOCKING");
  const bool launch_blocking = blocking_env && std::string(blocking_env) == "1";
  std::printf("CUDA_LAUNCH_BLOCKING=%s%s\n", blocking_env ? blocking_env : "(not set)",
              launch_blocking ? ": every launch waits for its kernel to finish" : "");
  tutorial::Verifier verifier;
  verifier.figure("launch_blocking", launch_blocking ? 1 : 0);
  int clock_khz = 0;  // cycles per millisecond, to give the spin kernel a length in time
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device.id));

  // --- Part 1: one short kernel, six ways ------------------------------------------
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));  // capture needs a stream of our own
  tutorial::DeviceBuffer<float> x(n), y(n);
  x.upload(std::vector<float>(n, 1.0f));
  y.upload(std::vector<float>(n, 2.0f));
  ShortAdd work{n, x.data(), y.data(), stream};
  for (int i = 0; i < 10; ++i) work.launch();  // warm-up: module load, clocks
  CUDA_CHECK(cudaStreamSynchronize(stream));

  const int blocks = (n + 255) / 256;
  std::printf("\nPart 1. add<<<%d, 256>>> on %d floats, timed six ways (medians, per launch):\n\n", blocks, n);
  // The holds last 20 us per launch queued behind them: far longer than queueing one takes.
  const double hold_ms = 0.02 * runs, batch_hold_ms = 0.02 * batch;
  auto cycles = [&](double ms) { return static_cast<long long>(ms * clock_khz); };
  double queue_ms = 0, held_queue_ms = 0, launch_queue_ms = 0, held_launch_queue_ms = 0;
  const double a = sync_after_each(work, runs);
  const double b = queued(work, runs, 0, queue_ms);
  const double b_held = queued(work, runs, cycles(hold_ms), held_queue_ms);
  const double c_batch = batched(work, batch, 0, launch_queue_ms);
  const double c_held = batched(work, batch, cycles(batch_hold_ms), held_launch_queue_ms);
  const double c_graph = graphed(work, batch);
  const std::vector<float> result = y.download();
  verifier.exact(tutorial::format("add, %lld launches: y = 2 + launches", work.adds),
                 tutorial::max_abs_error_from(result.data(), 2.0 + work.adds, n));

  tutorial::Table table({"Method", "Per launch", "vs graph", "What a sample holds"});
  auto row = [&](const std::string& method, double ms, const char* holds) {
    table.add_row({method, tutorial::format_time(ms), tutorial::format("%.2fx", ms / c_graph), holds});
  };
  auto behind = [](double ms) {
    return tutorial::format(" the same, queued behind a %s spin kernel", tutorial::format_time(ms).c_str());
  };
  row("(a) event pair, synchronize after each sample", a, "launch latency + kernel");
  row("(b) all event pairs queued, one synchronize", b, "the CPU's pace, where slower than the GPU");
  row("(b)" + behind(hold_ms), b_held,
      "kernel + event records + gap between launches");
  row(tutorial::format("(c) %d launches between one event pair", batch), c_batch,
      "the CPU's launch pace, where slower than the GPU");
  row("(c)" + behind(batch_hold_ms), c_held,
      "kernel + gap between launches");
  row(tutorial::format("(c) CUDA graph of %d launches, one event pair", batch), c_graph,
      "kernel + the graph's gap between kernels");
  table.print();
  std::printf("\nThe CPU queued one sample (event, launch, event) every %s, one launch every %s;\n"
              "the GPU ran one kernel of the graph every %s.\n",
              tutorial::format_time(queue_ms).c_str(), tutorial::format_time(launch_queue_ms).c_str(),
              tutorial::format_time(c_graph).c_str());
  if (held_queue_ms * runs > hold_ms || held_launch_queue_ms * batch > batch_hold_ms)
    std::printf("Note: queueing took longer than a spin kernel held the GPU, so some held samples waited.\n");
  verifier.figure("sync_each_us", sig3(a * 1e3));
  verifier.figure("queued_us", sig3(b * 1e3));
  verifier.figure("queued_held_us", sig3(b_held * 1e3));
  verifier.figure("batch_us", sig3(c_batch * 1e3));
  verifier.figure("batch_held_us", sig3(c_held * 1e3));
  verifier.figure("queue_one_launch_us", sig3(launch_queue_ms * 1e3));
  verifier.figure("graph_us", sig3(c_graph * 1e3));
  verifier.figure("queue_one_sample_us", sig3(queue_ms * 1e3));
  verifier.figure("sync_each_vs_graph", std::round(100 * a / c_graph) / 100);

  // --- Part 2: which calls wait for a running kernel ----------------------------------
  const long long spin_cycles = clock_khz;  // about 1 ms at the GPU's top clock
  tutorial::DeviceBuffer<int> done(1);
  int* pinned = nullptr;
  CUDA_CHECK(cudaMallocHost(&pinned, sizeof(int)));
  int pageable = 0;
  std::vector<double> spin_samples;
  tutorial::EventTimer timer;
  for (int i = 0; i < 3; ++i) {
    timer.start();
    spin<<<1, 1>>>(spin_cycles, done.data());
    CUDA_CHECK_LAUNCH();
    timer.stop();
    spin_samples.push_back(timer.elapsed_ms());
  }
  const double spin_ms = median(spin_samples);

  // Each row: an idle GPU, a fresh spin kernel (done = 0 until it ends), then the call.
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
  const double nothing_ms = after_spin([] {});
  const Clock::time_point launch_start = Clock::now();
  spin<<<1, 1>>>(spin_cycles, done.data());
  CUDA_CHECK_LAUNCH();
  const double launch_ms = ms_since(launch_start);
  CUDA_CHECK(cudaDeviceSynchronize());
  const double memcpy_ms = after_spin([&] {
    CUDA_CHECK(cudaMemcpy(&pageable, done.data(), sizeof(int), cudaMemcpyDeviceToHost));
  });
  verifier.exact("cudaMemcpy waited: it returned the value the kernel wrote as it ended", std::abs(pageable - 1));
  // cudaMemcpyAsync returns at once only where the copy can run later without the CPU:
  // into pageable memory, the runtime must stage the data through a buffer of its own.
  const double async_pageable_ms = after_spin([&] {
    CUDA_CHECK(cudaMemcpyAsync(&pageable, done.data(), sizeof(int), cudaMemcpyDeviceToHost));
  });
  const double async_pinned_ms = after_spin([&] {
    CUDA_CHECK(cudaMemcpyAsync(pinned, done.data(), sizeof(int), cudaMemcpyDeviceToHost));
  });
  verifier.exact("cudaMemcpyAsync to pinned memory: the value, after a synchronize", std::abs(*pinned - 1));
  std::vector<WaitRow> rows = {
      {"nothing (the clock starts once the launch has returned)", nothing_ms},
      {"the launch call itself (spin<<<1, 1>>>)", launch_ms},
      {"cudaMemcpy device -> host, 4 bytes", memcpy_ms},
      {"cudaMemcpyAsync device -> pageable host", async_pageable_ms},
      {"cudaMemcpyAsync device -> pinned host", async_pinned_ms},
  };

  // Managed memory the kernel does not touch, last written by the GPU: the CPU's read
  // migrates its page while the kernel runs (allowed where concurrentManagedAccess = 1).
  int concurrent_managed = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&concurrent_managed, cudaDevAttrConcurrentManagedAccess, device.id));
  if (concurrent_managed) {
    int* managed = nullptr;
    CUDA_CHECK(cudaMallocManaged(&managed, sizeof(int)));
    set_to<<<1, 1>>>(managed, 7);
    CUDA_CHECK_LAUNCH();
    int seen = 0;
    const double managed_read_ms = after_spin([&] { seen = *static_cast<volatile int*>(managed); });
    rows.push_back({"host read of a managed int (one the kernel does not touch)", managed_read_ms});
    verifier.exact("host read of managed memory: the value a finished kernel wrote", std::abs(seen - 7));
    verifier.figure("managed_read_us", sig3(managed_read_ms * 1e3));
    CUDA_CHECK(cudaFree(managed));
  } else {
    std::printf("(concurrentManagedAccess = 0 here: the CPU may not touch managed memory while a kernel runs.)\n");
  }
  int* spare = nullptr;
  CUDA_CHECK(cudaMalloc(&spare, sizeof(int)));
  const double free_ms = after_spin([&] { CUDA_CHECK(cudaFree(spare)); });
  rows.push_back({"cudaFree of another buffer", free_ms});
  rows.push_back({"cudaDeviceSynchronize", after_spin([] { CUDA_CHECK(cudaDeviceSynchronize()); })});
  CUDA_CHECK(cudaFreeHost(pinned));

  std::printf("\nPart 2. Which calls wait? spin<<<1, 1>>> runs %s (CUDA events); right after launching it,\n"
              "the CPU makes one call, timed by a CPU clock:\n\n", tutorial::format_time(spin_ms).c_str());
  tutorial::Table waits({"Call after the launch", "CPU time of the call", "Waited for the kernel?"});
  for (const WaitRow& r : rows) waits.add_row({r.call, tutorial::format_time(r.cpu_ms), waited(r.cpu_ms, spin_ms)});
  waits.print();
  verifier.figure("spin_ms", sig3(spin_ms));
  verifier.figure("launch_call_us", sig3(launch_ms * 1e3));
  verifier.figure("memcpy_ms", sig3(memcpy_ms));
  verifier.figure("memcpy_async_pageable_ms", sig3(async_pageable_ms));
  verifier.figure("memcpy_async_pinned_us", sig3(async_pinned_ms * 1e3));
  verifier.figure("free_ms", sig3(free_ms));

  // --- Part 3: where an asynchronous error surfaces --------------------------------------
  if (!cli.get_flag("no-fault-demo")) {
    std::printf("\nPart 3. A kernel writes through a null pointer. This program runs itself twice more\n"
                "(--fault-demo) to see which call reports it:\n\n");
    std::printf("  without CUDA_LAUNCH_BLOCKING:\n");
    const std::string plain = run_fault_demo("0");
    std::printf("  with CUDA_LAUNCH_BLOCKING=1:\n");
    const std::string blocking = run_fault_demo("1");
    std::printf("\n");
    verifier.expect("without CUDA_LAUNCH_BLOCKING the launch returns, and cudaMemcpy reports the error (" + plain + ")",
                    plain == "cudaMemcpy");
    verifier.expect("with CUDA_LAUNCH_BLOCKING=1 the launch itself reports it (" + blocking + ")",
                    blocking == "the launch");
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  return verifier.finish("05_timing");
}
