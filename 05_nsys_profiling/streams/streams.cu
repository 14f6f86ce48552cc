// Chapter 05, lesson "streams": copies and kernels overlapped across streams.
//
// Part 1 measures the copy engines: pageable against pinned host memory, each direction.
// Part 2 runs one job (copy in, compute, copy out) on one stream, then split into chunks whose
// three stages overlap on three streams chained by events; same pinned buffers, same async
// copies, same kernel. The kernel's work per element is calibrated so that its time is about
// one copy's time: then the ideal pipeline is 3x faster. Every result is checked exactly.
// Part 3 shows what the default stream does to two other streams (legacy or per-thread,
// decided when this file is compiled: see CMakeLists.txt's 05_streams_per_thread).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <tutorial/buffer.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>
#include <vector>

#include "cupti_tracer.h"

namespace {

// Each element steps a linear congruential generator `steps` times: whole-number work whose
// result the host computes in one step (the composed generator), so every element is checked.
constexpr uint32_t kMul = 1664525u, kAdd = 1013904223u;

__global__ void lcg_steps(uint32_t* data, size_t n, int steps) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t x = data[i];
    for (int s = 0; s < steps; ++s) x = x * kMul + kAdd;
    data[i] = x;
  }
}

// x -> a x + c, composed `steps` times, on the host (arithmetic modulo 2^32, as on the GPU).
struct Affine {
  uint32_t a = 1, c = 0;
};
Affine compose(int steps) {
  Affine f;
  for (int s = 0; s < steps; ++s) f = {f.a * kMul, f.c * kMul + kAdd};
  return f;
}

__global__ void spin(long long ns) {
  long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while (now - start < ns);
}

__global__ void touch() {}

struct Job {
  size_t n;
  int chunks;
  int steps;
  int grid;
  uint32_t* host_in;   // pinned
  uint32_t* host_out;  // pinned
  uint32_t* device;
  size_t chunk_elems() const { return n / chunks; }
};

// [excerpt:one-stream]
void run_one_stream(const Job& job, cudaStream_t stream) {
  const size_t bytes = job.n * sizeof(uint32_t);
  CUDA_CHECK(cudaMemcpyAsync(job.device, job.host_in, bytes, cudaMemcpyHostToDevice, stream));
  lcg_steps<<<job.grid, 256, 0, stream>>>(job.device, job.n, job.steps);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpyAsync(job.host_out, job.device, bytes, cudaMemcpyDeviceToHost, stream));
}
// [/excerpt:one-stream]

// Three streams, one per stage; events say when a chunk may enter the next stage.
struct Pipeline {
  cudaStream_t copy_in, compute, copy_out;
  std::vector<cudaEvent_t> copied, computed;
  explicit Pipeline(int chunks) : copied(chunks), computed(chunks) {
    for (cudaStream_t* s : {&copy_in, &compute, &copy_out})
      CUDA_CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
    for (int c = 0; c < chunks; ++c) {  // timing off: these events only order work
      CUDA_CHECK(cudaEventCreateWithFlags(&copied[c], cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreateWithFlags(&computed[c], cudaEventDisableTiming));
    }
  }
  ~Pipeline() {
    for (size_t c = 0; c < copied.size(); ++c) {
      cudaEventDestroy(copied[c]);
      cudaEventDestroy(computed[c]);
    }
    for (cudaStream_t s : {copy_in, compute, copy_out}) cudaStreamDestroy(s);
  }
};

// [excerpt:pipeline]
void run_pipeline(const Job& job, Pipeline& p) {
  const size_t elems = job.chunk_elems(), bytes = elems * sizeof(uint32_t);
  for (int c = 0; c < job.chunks; ++c) {
    const size_t first = c * elems;
    CUDA_CHECK(cudaMemcpyAsync(job.device + first, job.host_in + first, bytes,
                               cudaMemcpyHostToDevice, p.copy_in));
    CUDA_CHECK(cudaEventRecord(p.copied[c], p.copy_in));
    CUDA_CHECK(cudaStreamWaitEvent(p.compute, p.copied[c], 0));  // compute waits for chunk c
    lcg_steps<<<job.grid, 256, 0, p.compute>>>(job.device + first, elems, job.steps);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(p.computed[c], p.compute));
    CUDA_CHECK(cudaStreamWaitEvent(p.copy_out, p.computed[c], 0));
    CUDA_CHECK(cudaMemcpyAsync(job.host_out + first, job.device + first, bytes,
                               cudaMemcpyDeviceToHost, p.copy_out));
  }
}
// [/excerpt:pipeline]

// Checks every element against the composed generator; the output was poisoned first.
double max_error(const Job& job) {
  const Affine f = compose(job.steps);
  double worst = 0;
  for (size_t i = 0; i < job.n; ++i)
    worst = std::max(worst, std::fabs(double(job.host_out[i]) - double(f.a * job.host_in[i] + f.c)));
  return worst;
}

// Median milliseconds of `launch` (plus its stream's tail), timed on the legacy stream's clock.
template <typename Launch>
double median_ms(Launch&& launch, int runs) {
  std::vector<double> samples;
  tutorial::EventTimer timer;
  for (int r = -1; r < runs; ++r) {  // r = -1: warm-up
    CUDA_CHECK(cudaDeviceSynchronize());
    timer.start();
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());  // the pipeline's streams are non-blocking: wait for all
    timer.stop();
    if (r >= 0) samples.push_back(timer.elapsed_ms());
  }
  return tutorial::summarize(samples).median_ms;
}

double copy_gbs(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, int runs) {
  const double ms = median_ms([&] { CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind)); }, runs);
  return tutorial::gigabytes_per_second(double(bytes), ms);
}

// Part 3: spin in stream a, an empty kernel in the default stream, spin in stream b.
// Returns the wall time over one spin: about 2 if the default stream serialized them.
double default_stream_effect(long long spin_ns) {
  cudaStream_t a, b;
  CUDA_CHECK(cudaStreamCreate(&a));  // plain streams: "blocking" towards the legacy default stream
  CUDA_CHECK(cudaStreamCreate(&b));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ratios;
  for (int r = 0; r < 5; ++r) {
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaEventRecord(start, a));
    // [excerpt:default-stream]
    spin<<<1, 1, 0, a>>>(spin_ns);
    touch<<<1, 1>>>();  // the default stream: legacy waits for a, and b waits for it
    spin<<<1, 1, 0, b>>>(spin_ns);
    // [/excerpt:default-stream]
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaEventRecord(stop, b));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    ratios.push_back(ms / (spin_ns / 1e6));
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaStreamDestroy(a));
  CUDA_CHECK(cudaStreamDestroy(b));
  return tutorial::summarize(ratios).median_ms;
}

// Part 3's report: which default stream this build has, and what it did to streams a and b.
void default_stream_part(tutorial::Verifier& verifier, bool per_thread) {
  const double ratio = default_stream_effect(20'000'000);  // 20 ms spins
  std::printf("\nPart 3: default stream built as %s: spin in a, empty kernel in the default stream, spin in b\n"
              "took %.2f spins: %s\n", per_thread ? "per-thread" : "legacy", ratio,
              ratio > 1.5 ? "serialized (the default stream waited for a, b waited for it)" : "overlapped");
  verifier.figure(per_thread ? "per_thread_spins" : "legacy_spins", std::round(ratio * 100) / 100);
  verifier.expect(per_thread ? "per-thread default stream leaves a and b to overlap"
                             : "legacy default stream serializes a and b",
                  per_thread ? ratio < 1.5 : ratio > 1.5);
}

// One traced run of each way, printed as rows the lesson's figure is drawn from.
void print_timeline(const Job& job, Pipeline& pipeline, cudaStream_t one) {
  trace::CuptiTracer tracer;
  const std::string why = tracer.start();
  if (!why.empty()) {
    std::printf("Timeline not traced: %s\n", why.c_str());
    return;
  }
  run_one_stream(job, one);
  CUDA_CHECK(cudaDeviceSynchronize());
  const uint64_t split = trace::CuptiTracer::now_ns();
  run_pipeline(job, pipeline);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<trace::Event> events = tracer.stop();
  std::printf("\nTimeline (CUPTI; us from each run's first GPU operation; lane = what ran):\n");
  for (int part = 0; part < 2; ++part) {
    uint64_t origin = UINT64_MAX;
    for (const trace::Event& e : events)
      if (e.track != trace::Track::kApi && e.track != trace::Track::kPhase && (e.start_ns >= split) == (part == 1))
        origin = std::min(origin, e.start_ns);
    for (const trace::Event& e : events) {
      if (e.track == trace::Track::kApi || e.track == trace::Track::kPhase || (e.start_ns >= split) != (part == 1))
        continue;
      const char* lane = e.track == trace::Track::kKernel ? "kernel"
                         : e.name.find("Host-to-Device") != std::string::npos ? "copy in"
                                                                               : "copy out";
      std::printf("TIMELINE %s | %s | %.1f | %.1f\n", part == 0 ? "one stream" : "pipeline", lane,
                  (e.start_ns - origin) / 1e3, (e.end_ns - origin) / 1e3);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("05_streams",
                    "Copies and kernels overlapped across streams, against the same work on one stream.");
  cli.add_int("n", "32-bit elements in the job", 1 << 26, 1024, 1 << 28);
  cli.add_int("chunks", "chunks the pipeline splits the job into", 16, 1, 256);
  cli.add_int("runs", "timed runs (median reported)", 10, 1, 1000);
  cli.add_flag("check-only", "verify, do not time");
  cli.add_flag("skip-part3", "leave out part 3, the default stream (compute-sanitizer may serialize its kernels)");
  cli.parse_or_exit(argc, argv);
  const size_t n = size_t(cli.get_int("n"));
  const int chunks = int(cli.get_int("chunks")), runs = int(cli.get_int("runs"));
  if (n % chunks != 0) {
    std::fprintf(stderr, "05_streams: --n must be a multiple of --chunks\n");
    return tutorial::kExitUsage;
  }
  const tutorial::DeviceInfo device = tutorial::require_gpu();
  const bool timed = !cli.get_flag("check-only");
  const size_t bytes = n * sizeof(uint32_t);
  tutorial::Verifier verifier;

  // [excerpt:pinned]
  uint32_t *host_in = nullptr, *host_out = nullptr;
  CUDA_CHECK(cudaMallocHost(&host_in, bytes));  // pinned: the copy engine reads it directly
  CUDA_CHECK(cudaMallocHost(&host_out, bytes));
  // [/excerpt:pinned]
  for (size_t i = 0; i < n; ++i) host_in[i] = uint32_t(i * 2654435761u);
  tutorial::DeviceBuffer<uint32_t> device_data(n);
  const int grid = device.sm_count * 8;

  // Part 1: the copy engines' rates (the figure's explanation).
  double h2d = 0, d2h = 0;
  if (timed) {
    std::vector<uint32_t> pageable(host_in, host_in + n);
    const double pageable_h2d = copy_gbs(device_data.data(), pageable.data(), bytes, cudaMemcpyHostToDevice, runs);
    h2d = copy_gbs(device_data.data(), host_in, bytes, cudaMemcpyHostToDevice, runs);
    d2h = copy_gbs(host_out, device_data.data(), bytes, cudaMemcpyDeviceToHost, runs);
    std::printf("\nPart 1: copy rates, %.0f MiB\n\n", bytes / 1048576.0);
    tutorial::Table rates({"Copy", "GB/s"});
    rates.add_row({"host to device, pageable memory", tutorial::format("%.1f", pageable_h2d)});
    rates.add_row({"host to device, pinned memory", tutorial::format("%.1f", h2d)});
    rates.add_row({"device to host, pinned memory", tutorial::format("%.1f", d2h)});
    rates.print();
    verifier.figure("pageable_h2d_gbs", std::round(pageable_h2d * 10) / 10);
    verifier.figure("h2d_gbs", std::round(h2d * 10) / 10);
    verifier.figure("d2h_gbs", std::round(d2h * 10) / 10);
  }

  // Calibrate the kernel: as many steps as make it take one host-to-device copy's time. Twice:
  // at few steps memory traffic is part of the time, so the first guess is only close.
  Job job{n, chunks, 64, grid, host_in, host_out, device_data.data()};
  if (timed) {
    const double copy_ms = bytes / (h2d * 1e6);
    for (int pass = 0; pass < 2; ++pass) {
      const double probe_ms = median_ms([&] { lcg_steps<<<grid, 256>>>(job.device, n, job.steps); }, 3);
      job.steps = std::max(1, int(job.steps * copy_ms / probe_ms));
    }
  }

  Pipeline pipeline(chunks);
  cudaStream_t one;
  CUDA_CHECK(cudaStreamCreateWithFlags(&one, cudaStreamNonBlocking));
  std::memset(host_out, 0xFF, bytes);  // poison
  run_one_stream(job, one);
  CUDA_CHECK(cudaDeviceSynchronize());
  verifier.exact("one stream, every element", max_error(job));
  std::memset(host_out, 0xFF, bytes);
  run_pipeline(job, pipeline);
  CUDA_CHECK(cudaDeviceSynchronize());
  verifier.exact(tutorial::format("pipeline of %d chunks on 3 streams, every element", chunks), max_error(job));

  if (timed) {
    const double kernel_ms = median_ms([&] { lcg_steps<<<grid, 256>>>(job.device, n, job.steps); }, runs);
    std::vector<double> serial, overlapped;  // interleaved: one of each per round
    for (int r = 0; r < runs; ++r) {
      serial.push_back(median_ms([&] { run_one_stream(job, one); }, 1));
      overlapped.push_back(median_ms([&] { run_pipeline(job, pipeline); }, 1));
    }
    const tutorial::Timing s = tutorial::summarize(serial), o = tutorial::summarize(overlapped);
    std::printf("\nPart 2: %zu elements (%.0f MiB each way), kernel of %d steps per element\n\n", n,
                bytes / 1048576.0, job.steps);
    tutorial::Table stages({"Stage or run", "Median", "Range of runs"});
    stages.add_row({"copy in (pinned)", tutorial::format_time(bytes / (h2d * 1e6)), "from Part 1"});
    stages.add_row({"kernel", tutorial::format_time(kernel_ms), ""});
    stages.add_row({"copy out (pinned)", tutorial::format_time(bytes / (d2h * 1e6)), "from Part 1"});
    stages.add_row({"one stream: the three in turn", tutorial::format_time(s.median_ms),
                    tutorial::format_time(s.min_ms) + " - " + tutorial::format_time(s.max_ms)});
    stages.add_row({tutorial::format("pipeline: %d chunks, 3 streams", chunks), tutorial::format_time(o.median_ms),
                    tutorial::format_time(o.min_ms) + " - " + tutorial::format_time(o.max_ms)});
    stages.print();
    std::printf("\n");
    const double speedup = s.median_ms / o.median_ms;
    verifier.goal("pipeline's speed-up over one stream (moonshot 2.7x, ideal 3x)", speedup, 2.0, "x");
    verifier.figure("kernel_ms", std::round(kernel_ms * 1000) / 1000);
    verifier.figure("one_stream_ms", std::round(s.median_ms * 1000) / 1000);
    verifier.figure("pipeline_ms", std::round(o.median_ms * 1000) / 1000);
    verifier.figure("speedup", std::round(speedup * 100) / 100);
    print_timeline(job, pipeline, one);
  }

  // Part 3: the default stream.
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
  const bool per_thread = true;
#else
  const bool per_thread = false;
#endif
  if (!cli.get_flag("skip-part3")) default_stream_part(verifier, per_thread);

  CUDA_CHECK(cudaStreamDestroy(one));
  CUDA_CHECK(cudaFreeHost(host_in));
  CUDA_CHECK(cudaFreeHost(host_out));
  return verifier.finish(per_thread ? "05_streams_per_thread" : "05_streams");
}
