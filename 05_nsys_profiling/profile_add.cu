// Chapter 05: seeing where the time goes.
//
// The add progression of chapters 01-03 (one thread, one block, many blocks) on
// unified memory, with a prefetch and explicit copies: a program worth profiling.
// Each phase is an NVTX range, so nsys shows it on its timeline and ncu can pick
// kernels by it. With --trace FILE the program also traces itself with CUPTI
// (cupti_tracer.h), prints nsys-style summaries and writes FILE as a Chrome
// trace: what nsys would show, on a machine without nsys.
//
// What the numbers teach:
//  1. the first launch costs far more than the ones after it;
//  2. a CPU clock around an asynchronous launch times the launch, not the kernel,
//     and CUDA events around one short launch hold the launch's latency too;
//  3. unified memory moves on demand (page faults) or when prefetched, and a
//     trace shows which, when, and how long it took.
#include <nvtx3/nvToolsExt.h>

#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>  // access

#include <tutorial/buffer.cuh>
#include <tutorial/check.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>

#include "cupti_tracer.h"
#include "trace_report.h"

// y = x + y with a grid-stride loop: correct for any grid, from <<<1, 1>>> up.
__global__ void add(int n, const float* x, float* y) {
  const int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = x[i] + y[i];
}

// One phase of the program: an NVTX range (what nsys shows and ncu filters on)
// and, when --trace is on, the same span in our own tracer.
class Phase {
 public:
  // [excerpt:phase]
  Phase(const char* name, trace::CuptiTracer& tracer) : name_(name), tracer_(tracer) {
    nvtxRangePushA(name);
    if (tracer_.running()) start_ns_ = trace::CuptiTracer::now_ns();
  }
  ~Phase() {
    nvtxRangePop();
    if (tracer_.running()) tracer_.add_phase(name_, start_ns_, trace::CuptiTracer::now_ns());
  }
  // [/excerpt:phase]
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

 private:
  const char* name_;
  trace::CuptiTracer& tracer_;
  uint64_t start_ns_ = 0;
};

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// One launch configuration timed with three clocks (medians, in ms).
struct ThreeClocks {
  double cpu_launch_only = 0;  // CPU clock around the launch call alone
  double cpu_with_sync = 0;    // CPU clock around the launch and cudaDeviceSynchronize
  double events = 0;           // CUDA events before and after the launch, in the stream
};

ThreeClocks time_three_ways(const std::function<void()>& launch, tutorial::TimingPlan plan) {
  for (int i = 0; i < plan.warmup; ++i) launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> launch_only, with_sync;
  for (int i = 0; i < plan.runs; ++i) {
    // [excerpt:cpu-clocks]
    // The launch returns once the kernel is queued: this clock stops long
    // before the GPU is done, so it measures the launch, however long the kernel.
    Clock::time_point start = Clock::now();
    launch();
    launch_only.push_back(ms_since(start));
    CUDA_CHECK(cudaDeviceSynchronize());

    // Waiting inside the clock counts the kernel, plus the launch and the
    // CPU waking up after the GPU finished: right for long kernels, not short ones.
    start = Clock::now();
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    with_sync.push_back(ms_since(start));
    // [/excerpt:cpu-clocks]
  }
  // Events are time-stamped by the GPU as it passes them in the stream. Each pair
  // starts on an idle stream (the sample before it was waited for), so the start event
  // is stamped at once and the GPU then waits for the launch to arrive: the pair holds
  // that wait too. (05_timing shows how to leave it out.)
  tutorial::EventTimer timer;
  std::vector<double> events;
  for (int i = 0; i < plan.runs; ++i) {
    timer.start();
    launch();
    timer.stop();
    events.push_back(timer.elapsed_ms());
  }
  return {tutorial::summarize(launch_only).median_ms, tutorial::summarize(with_sync).median_ms,
          tutorial::summarize(events).median_ms};
}

// A headline figure as the README shows it: three significant digits.
double sig3(double value) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(std::fabs(value))));
  return std::round(value * scale) / scale;
}

// The durations (ms) of the runtime API calls named \p name, in the order they were made.
std::vector<double> api_call_ms(const std::vector<trace::Event>& events, const std::string& name) {
  std::vector<double> found;
  for (const trace::Event& e : events)
    if (e.track == trace::Track::kApi && e.name == name) found.push_back(e.duration_ns() * 1e-6);
  return found;
}

// Moves a managed allocation to the GPU before a kernel needs it: one bulk
// migration instead of page faults. CUDA 13 takes the destination as a
// cudaMemLocation (that form exists since 12.2); CUDA 12 took a device number.
void prefetch_to_gpu(const void* data, size_t bytes, int device) {
#if CUDART_VERSION >= 13000
  cudaMemLocation location{};
  location.type = cudaMemLocationTypeDevice;
  location.id = device;
  CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, location, 0, nullptr));
#else
  CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, device, nullptr));
#endif
}

// Whether \p name was given on the command line, as --name VALUE or --name=VALUE.
bool option_given(int argc, char** argv, const std::string& name) {
  for (int i = 1; i < argc; ++i)
    if (argv[i] == "--" + name || std::string(argv[i]).rfind("--" + name + "=", 0) == 0) return true;
  return false;
}

// "" if \p path can be written, else why not. Opens it for appending, which changes nothing in a
// file that exists, and removes the file again if this made it: nothing is left behind.
std::string cannot_write(const std::string& path) {
  if (path.empty()) return "";
  const bool existed = access(path.c_str(), F_OK) == 0;
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) return std::strerror(errno);
  std::fclose(file);
  if (!existed) std::remove(path.c_str());
  return "";
}

int main(int argc, char** argv) {
  tutorial::Cli cli("05_nsys_profiling",
                    "Runs the add progression (1 thread, 1 block, many blocks) on unified memory, "
                    "with a prefetch and copies,\nas named NVTX phases for nsys and ncu. --trace "
                    "also traces it with CUPTI, no nsys needed: nsys-style summaries and a Chrome trace.");
  cli.add_int("n", "number of elements (add<<<1, 1>>> takes ~50 ms per 2^20 on an H200)", 1 << 20, 1,
              1 << 26);
  cli.add_int("runs", "timed runs per launch configuration (1 for add<<<1, 1>>>)", 10, 1, 1000);
  cli.add_string("trace", "write a Chrome trace (JSON) to this file and print nsys-style summaries", "");
  cli.parse_or_exit(argc, argv);
  const int n = static_cast<int>(cli.get_int("n"));
  const int runs = static_cast<int>(cli.get_int("runs"));
  const std::string trace_path = cli.get_string("trace");

  // Bad --trace values are usage errors, found before any GPU work. The parser leaves "" both
  // for no --trace and for `--trace ''`, so the second is looked for in argv itself.
  if (trace_path.empty() && option_given(argc, argv, "trace")) {
    std::fprintf(stderr, "05_nsys_profiling: --trace needs a file name, not an empty one\n");
    return tutorial::kExitUsage;
  }
  auto refuse_trace = [&](const std::string& why) {
    std::fprintf(stderr, "05_nsys_profiling: cannot write the trace to '%s': %s\n", trace_path.c_str(),
                 why.c_str());
    return tutorial::kExitUsage;
  };
  if (const std::string why = cannot_write(trace_path); !why.empty()) return refuse_trace(why);

  // No GPU: require_gpu() says so, as every program does, and exits 77, before the tracer
  // starts (CUPTI would only add an error of its own) and before the trace file exists.
  // cudaGetDeviceCount creates no context, so the tracer still sees context creation.
  if (int devices = 0; cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) tutorial::require_gpu();

  // Start tracing before the first call that creates the context, so that context
  // creation and module loading are on the record too.
  trace::CuptiTracer tracer;
  if (!trace_path.empty()) {
    const std::string why = tracer.start();
    if (!why.empty())
      std::printf("Note: CUPTI cannot trace this run (%s).\nThe lesson runs untraced; nsys or ncu, "
                  "where installed, do not need this tracer.\n", why.c_str());
  }

  const tutorial::DeviceInfo device = tutorial::require_gpu();
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> trace_file(nullptr, std::fclose);
  if (!trace_path.empty()) {
    trace_file.reset(std::fopen(trace_path.c_str(), "w"));
    if (!trace_file) return refuse_trace(std::strerror(errno));
  }
  const size_t bytes = size_t(n) * sizeof(float);
  tutorial::require_device_memory(4 * bytes, "two managed arrays and two device buffers of --n floats");
  std::printf("y = x + y on %d floats (%s per array), %d timed runs per launch configuration.\n", n,
              trace::format_bytes(bytes).c_str(), runs);
  if (tracer.running()) {
    std::printf("CUPTI is tracing kernels, copies, memsets and runtime API calls.\n");
    if (!tracer.unified_memory_error().empty())
      std::printf("Unified-memory migrations are not traced: %s\n", tracer.unified_memory_error().c_str());
  }

  tutorial::Verifier verifier;
  float* x = nullptr;
  float* y = nullptr;
  {
    Phase phase("allocate", tracer);
    CUDA_CHECK(cudaMallocManaged(&x, bytes));
    CUDA_CHECK(cudaMallocManaged(&y, bytes));
  }
  {
    Phase phase("initialize on the host", tracer);
    for (int i = 0; i < n; ++i) {
      x[i] = 1.0f;
      y[i] = 2.0f;
    }
  }

  // Every launch adds x = 1 to y, so after k launches y = 2 + k exactly
  // (k stays far below 2^24, where floats stop holding every integer).
  int launches = 0;
  auto launcher = [&](int blocks, int threads) {
    return [&, blocks, threads] {
      add<<<blocks, threads>>>(n, x, y);
      CUDA_CHECK_LAUNCH();
      ++launches;
    };
  };
  auto verify_y = [&](const std::string& what) {
    CUDA_CHECK(cudaDeviceSynchronize());
    Phase phase("verify on the host", tracer);  // the CPU reads y: its pages migrate back
    verifier.exact(what + ": y = 2 + launches", tutorial::max_abs_error_from(y, 2.0 + launches, n));
  };

  // Lesson 1: the first launch. The notes' program, add<<<1, 1>>> on data the
  // CPU has just written: one-time setup on the CPU, page faults on the GPU.
  double first_call_ms = 0, first_run_ms = 0;
  {
    Phase phase("add 1 thread, first launch", tracer);
    tutorial::EventTimer timer;
    timer.start();
    const Clock::time_point start = Clock::now();
    launcher(1, 1)();
    first_call_ms = ms_since(start);
    timer.stop();
    first_run_ms = timer.elapsed_ms();
  }
  verify_y("add<<<1, 1>>>, first launch");

  // Lesson 2: three clocks on each launch configuration, after a prefetch.
  int concurrent_managed_access = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&concurrent_managed_access, cudaDevAttrConcurrentManagedAccess,
                                    device.id));
  struct Config {
    const char* phase;  // also its NVTX range (ncu_add.sh filters on "add many blocks")
    int blocks, threads;
    tutorial::TimingPlan plan;
    ThreeClocks clocks{};  // {}: else g++ 11 warns where the list below leaves it out
    uint64_t from_ns = 0, to_ns = 0;  // the phase on the tracer's clock: its kernels started in it
  };
  std::vector<Config> configs = {
      {"add 1 thread", 1, 1, {0, 1}},  // ~50 ms a run at 2^20: one is enough
      {"add 1 block", 1, 256, {2, runs}},
      {"add many blocks", (n + 255) / 256, 256, {2, runs}},
  };
  for (Config& config : configs) {
    if (concurrent_managed_access) {
      Phase phase("prefetch to the GPU", tracer);
      prefetch_to_gpu(x, bytes, device.id);
      prefetch_to_gpu(y, bytes, device.id);
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    {
      // CUPTI's clock only while tracing: untraced, the program makes no CUPTI
      // call, and leaves the driver's tool hooks to ncu or compute-sanitizer.
      Phase phase(config.phase, tracer);
      if (tracer.running()) config.from_ns = trace::CuptiTracer::now_ns();
      config.clocks = time_three_ways(launcher(config.blocks, config.threads), config.plan);
      if (tracer.running()) config.to_ns = trace::CuptiTracer::now_ns();
    }
    verify_y("add" + trace::launch_text({config.blocks, 1, 1}, {config.threads, 1, 1}));
  }

  // Explicit copies, for the memory-operation summary: a memset, host to device,
  // device to device, device to host. Small integers survive every copy exactly.
  {
    Phase phase("copies", tracer);
    std::vector<float> host(n);
    for (int i = 0; i < n; ++i) host[i] = float(i % 1000);
    tutorial::DeviceBuffer<float> a(n), b(n);
    b.poison();
    a.upload(host);
    CUDA_CHECK(cudaMemcpy(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice));
    const std::vector<float> back = b.download();
    verifier.exact("copies host -> device -> device -> host",
                   tutorial::max_abs_error(back.data(), host.data(), size_t(n)));
  }
  {
    Phase phase("free", tracer);
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(y));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<trace::Event> events = tracer.stop();

  // What the clocks said.
  std::printf("\nFirst launch: the launch call took %s on the CPU, later calls %s (median): the first\n"
              "pays one-time setup, such as loading the kernel (CUDA loads modules lazily by default).\n",
              tutorial::format_time(first_call_ms).c_str(),
              tutorial::format_time(configs.back().clocks.cpu_launch_only).c_str());
  std::printf("First run of add<<<1, 1>>>, on pages the CPU wrote: %s (CUDA events); on prefetched "
              "pages: %s.\n",
              tutorial::format_time(first_run_ms).c_str(),
              tutorial::format_time(configs.front().clocks.events).c_str());

  std::printf(
      "\nOne kernel, three clocks (medians). A CPU clock around the launch call times the launch\n"
      "alone; with cudaDeviceSynchronize inside, it adds the kernel and the CPU waking up. CUDA\n"
      "events time the GPU from one event to the next: the kernel, plus the wait for the launch\n"
      "to reach the GPU after the start event (microseconds: it swamps a short kernel). CUPTI's\n"
      "kernel records time the kernel alone (the median over the phase's launches, and how many).\n\n");
  tutorial::Table table({"Launch", "Timed runs", "CPU clock, launch only", "CPU clock, launch + sync",
                         "CUDA events", "CUPTI kernel time (launches)"});
  for (const Config& config : configs) {
    const std::string launch = trace::launch_text({config.blocks, 1, 1}, {config.threads, 1, 1});
    std::vector<trace::Event> in_phase;
    for (const trace::Event& e : events)
      if (e.track == trace::Track::kKernel && e.start_ns >= config.from_ns && e.start_ns <= config.to_ns)
        in_phase.push_back(e);
    std::string traced = "-";
    double cupti_ms = 0;
    for (const trace::SummaryRow& row : trace::summarize(in_phase, trace::Track::kKernel))
      if (row.detail == launch && row.name.rfind("add(", 0) == 0) {
        cupti_ms = row.median_ns * 1e-6;
        traced = tutorial::format_time(cupti_ms) + tutorial::format(" (%zu)", row.count);
      }
    if (&config == &configs.back() && traced != "-") verifier.figure("many_blocks_cupti_us", sig3(cupti_ms * 1e3));
    table.add_row({"add" + launch, std::to_string(config.plan.runs),
                   tutorial::format_time(config.clocks.cpu_launch_only),
                   tutorial::format_time(config.clocks.cpu_with_sync),
                   tutorial::format_time(config.clocks.events), traced});
  }
  table.print();
  const ThreeClocks& many = configs.back().clocks;
  verifier.figure("first_launch_call_us", sig3(first_call_ms * 1e3));
  verifier.figure("later_launch_call_us", sig3(many.cpu_launch_only * 1e3));
  verifier.figure("first_run_ms", sig3(first_run_ms));
  verifier.figure("prefetched_run_ms", sig3(configs.front().clocks.events));
  verifier.figure("many_blocks_sync_us", sig3(many.cpu_with_sync * 1e3));
  verifier.figure("many_blocks_events_us", sig3(many.events * 1e3));

  // Where the one-time costs landed, from the trace's API records.
  if (const std::vector<double> set_device = api_call_ms(events, "cudaSetDevice"); !set_device.empty())
    verifier.figure("set_device_ms", sig3(set_device.front()));
  if (const std::vector<double> managed = api_call_ms(events, "cudaMallocManaged"); managed.size() == 2) {
    verifier.figure("first_malloc_managed_ms", sig3(managed[0]));
    verifier.figure("second_malloc_managed_us", sig3(managed[1] * 1e3));
  }

  if (trace_file) {
    trace::print_report(events);
    if (tracer.dropped_records() > 0)
      std::printf("\nNote: CUPTI dropped %llu records (no free buffer): the summaries miss them.\n",
                  static_cast<unsigned long long>(tracer.dropped_records()));
    const std::string json = trace::chrome_trace_json(events);
    const bool written = std::fputs(json.c_str(), trace_file.get()) >= 0;
    if (std::fclose(trace_file.release()) == 0 && written)
      std::printf("\nWrote %s (%zu events): open it in https://ui.perfetto.dev or chrome://tracing.\n",
                  trace_path.c_str(), events.size());
    else
      verifier.expect("writing the trace to " + trace_path + ": " + std::strerror(errno), false);
  }
  return verifier.finish("05_nsys_profiling");
}
