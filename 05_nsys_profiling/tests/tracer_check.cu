// Checks the CUPTI tracer against what this program knows it did: 7 launches of
// one kernel must give 7 kernel records, each copy and memset one record with its
// exact byte count, and each kernel's traced duration must agree with CUDA events.
// Exit 77 (skipped) without a GPU, or where CUPTI cannot trace.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <tutorial/check.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/verify.hpp>

#include "cupti_tracer.h"
#include "trace_report.h"

// Busy-waits for \p cycles SM clock cycles: a kernel whose length we choose.
// At global scope on purpose: CUPTI (and nsys, and ncu) name a kernel by its
// demangled signature, and inside an anonymous namespace this one would be
// "(anonymous namespace)::spin(long long)". The first version of this check sat
// there and looked for names starting with "spin(": it found none of the 7.
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

namespace {

// The name the kernel records carry: the demangled signature.
constexpr const char* kSpinName = "spin(long long)";
constexpr int kLaunches = 7;
constexpr size_t kToDevice = 1'000'003, kDeviceToDevice = 65'536, kToHost = 123'457, kMemset = 4'099;

// CUDA events read a kernel's time exactly only when the GPU reaches them with the next
// work already queued: an event recorded on an idle stream is stamped at once, and the
// kernel behind it waits for its launch to arrive from the CPU (tens of microseconds, and
// it varies). So the launches below are queued back to back, one event between each two:
// every event but the first is stamped while a kernel is running. Allow 10 us plus 2% of a
// ~1 ms kernel for the gap between two kernels and the events' resolution.
bool agree(double traced_ms, double events_ms) {
  return std::abs(traced_ms - events_ms) <= 0.010 + 0.02 * events_ms;
}

// The events of one track that satisfy \p keep.
template <typename Keep>
std::vector<trace::Event> select(const std::vector<trace::Event>& events, trace::Track track, Keep keep) {
  std::vector<trace::Event> out;
  for (const trace::Event& e : events)
    if (e.track == track && keep(e)) out.push_back(e);
  return out;
}

// Writes each launch's times as CSV (launch, events_ms[, cupti_ms]) for tests/three_tools.py.
bool write_times(const std::string& path, const std::vector<double>& events_ms, const std::vector<double>& cupti_ms) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return false;
  bool written = std::fprintf(file, cupti_ms.empty() ? "launch,events_ms\n" : "launch,events_ms,cupti_ms\n") > 0;
  for (size_t i = 0; i < events_ms.size(); ++i)
    written = (cupti_ms.empty() ? std::fprintf(file, "%zu,%.6f\n", i + 1, events_ms[i])
                                : std::fprintf(file, "%zu,%.6f,%.6f\n", i + 1, events_ms[i], cupti_ms[i])) > 0 &&
              written;
  return std::fclose(file) == 0 && written;
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("05_tracer_check", "Checks the chapter's CUPTI tracer against known work.");
  cli.add_string("trace", "also write the Chrome trace to this file", "");
  cli.add_string("times", "also write each launch's CUDA-event and CUPTI times (CSV) to this file", "");
  cli.add_flag("events-only", "no tracer: CUDA events alone (under nsys, whose CUPTI would lose its trace to ours)");
  cli.parse_or_exit(argc, argv);
  const std::string trace_path = cli.get_string("trace");
  const std::string times_path = cli.get_string("times");
  const bool events_only = cli.get_flag("events-only");

  // CUPTI serves one client per process: started under nsys, the tracer would take the
  // activity records nsys needs (nsys then reports no kernel), hence --events-only.
  trace::CuptiTracer tracer;
  const std::string why = events_only ? "" : tracer.start();
  const tutorial::DeviceInfo device = tutorial::require_gpu();
  if (!why.empty()) {
    std::printf("CUPTI cannot trace here (%s): skipping.\n", why.c_str());
    return tutorial::kExitNoGpu;
  }

  // Seven kernels of about 1 ms each, every one between its own pair of events.
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device.id));
  const long long cycles_per_ms = clock_khz;  // kHz: cycles per millisecond
  std::vector<cudaEvent_t> marks(kLaunches + 1);  // marks[i] before launch i, marks[i + 1] after it
  for (cudaEvent_t& mark : marks) CUDA_CHECK(cudaEventCreate(&mark));
  CUDA_CHECK(cudaEventRecord(marks[0]));
  for (int i = 0; i < kLaunches; ++i) {
    spin<<<1, 1>>>(cycles_per_ms);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(marks[i + 1]));
  }
  CUDA_CHECK(cudaEventSynchronize(marks[kLaunches]));
  std::vector<double> event_ms;
  for (int i = 0; i < kLaunches; ++i) {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, marks[i], marks[i + 1]));
    event_ms.push_back(ms);
  }
  for (cudaEvent_t mark : marks) CUDA_CHECK(cudaEventDestroy(mark));
  if (events_only) {
    tutorial::Verifier verifier;
    if (!times_path.empty()) verifier.expect("the launch times are written to " + times_path,
                                             write_times(times_path, event_ms, {}));
    return verifier.finish("05_tracer_check --events-only");
  }

  // Copies of odd sizes between pinned host memory (one DMA transfer each) and the device.
  unsigned char* host = nullptr;
  unsigned char *device_a = nullptr, *device_b = nullptr;
  CUDA_CHECK(cudaMallocHost(&host, kToDevice));
  CUDA_CHECK(cudaMalloc(&device_a, kToDevice));
  CUDA_CHECK(cudaMalloc(&device_b, kToDevice));
  std::memset(host, 7, kToDevice);
  CUDA_CHECK(cudaMemcpy(device_a, host, kToDevice, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(device_b, device_a, kDeviceToDevice, cudaMemcpyDeviceToDevice));
  CUDA_CHECK(cudaMemcpy(host, device_b, kToHost, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemset(device_a, 0, kMemset));
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaFree(device_a));
  CUDA_CHECK(cudaFree(device_b));
  CUDA_CHECK(cudaFreeHost(host));
  const std::vector<trace::Event> events = tracer.stop();

  // Every kernel record, whatever its name, then those named as the kernel is:
  // a wrong name shows up as a difference between the two counts.
  tutorial::Verifier verifier;
  const auto kernels = select(events, trace::Track::kKernel, [](const trace::Event&) { return true; });
  const auto spins =
      select(events, trace::Track::kKernel, [](const trace::Event& e) { return e.name == kSpinName; });
  const std::string misnamed =
      spins.size() == kernels.size() ? "" : " (the first record is named " + kernels[0].name + ")";
  verifier.expect(tutorial::format("%d launches of spin, %zu kernel records, %zu named %s%s", kLaunches,
                                   kernels.size(), spins.size(), kSpinName, misnamed.c_str()),
                  kernels.size() == size_t(kLaunches) && spins.size() == size_t(kLaunches));
  const auto launch_calls = select(events, trace::Track::kApi, [](const trace::Event& e) {
    return e.name.rfind("cudaLaunch", 0) == 0;
  });
  verifier.expect(tutorial::format("%d launches, %zu cudaLaunch* API records", kLaunches, launch_calls.size()),
                  launch_calls.size() == size_t(kLaunches));

  const auto copies = select(events, trace::Track::kMemcpy, [](const trace::Event&) { return true; });
  verifier.expect(tutorial::format("3 copies, %zu memcpy records", copies.size()), copies.size() == 3);
  auto expect_copy = [&](const char* name, const char* detail, size_t bytes) {
    const auto match = select(events, trace::Track::kMemcpy, [&](const trace::Event& e) {
      return e.name == name && e.detail == detail && e.bytes == bytes;
    });
    verifier.expect(tutorial::format("one %s record (%s) of exactly %zu bytes", name, detail, bytes),
                    match.size() == 1);
  };
  expect_copy("[CUDA memcpy Host-to-Device]", "pinned -> device", kToDevice);
  expect_copy("[CUDA memcpy Device-to-Device]", "device -> device", kDeviceToDevice);
  expect_copy("[CUDA memcpy Device-to-Host]", "device -> pinned", kToHost);
  const auto memsets = select(events, trace::Track::kMemset, [](const trace::Event&) { return true; });
  verifier.expect(tutorial::format("one memset record of exactly %zu bytes", kMemset),
                  memsets.size() == 1 && memsets[0].bytes == kMemset);

  // The summary groups the seven launches into one row.
  const auto rows = trace::summarize(events, trace::Track::kKernel);
  verifier.expect(tutorial::format("the kernel summary has one row, %s <<<1, 1>>>, with %d instances",
                                   kSpinName, kLaunches),
                  rows.size() == 1 && rows[0].name == kSpinName && rows[0].count == size_t(kLaunches) &&
                      rows[0].detail == "<<<1, 1>>>");

  // Kernel times: the tracer against CUDA events. The first launch's start event was
  // stamped on an idle stream, before the launch (and its one-time setup on the CPU)
  // arrived, so it is shown but not compared.
  if (spins.size() == size_t(kLaunches)) {
    tutorial::Table table({"Launch", "CUDA events", "CUPTI", "Difference", "Compared"});
    double largest_us = 0;  // the largest difference among the compared launches
    for (int i = 0; i < kLaunches; ++i) {
      const double traced_ms = spins[i].duration_ns() * 1e-6;
      const bool compared = i > 0;
      const double difference_us = std::abs(traced_ms - event_ms[i]) * 1e3;
      if (compared && difference_us > largest_us) largest_us = difference_us;
      if (!compared) verifier.figure("first_launch_difference_us", std::round(10 * difference_us) / 10);
      table.add_row({std::to_string(i + 1), tutorial::format_time(event_ms[i]),
                     tutorial::format_time(traced_ms), tutorial::format_time(std::abs(traced_ms - event_ms[i])),
                     compared ? (agree(traced_ms, event_ms[i]) ? "agree" : "DISAGREE") : "no (first launch)"});
      if (compared)
        verifier.expect(tutorial::format("launch %d: CUPTI %.4f ms vs events %.4f ms, within 10 us + 2%%",
                                         i + 1, traced_ms, event_ms[i]),
                        agree(traced_ms, event_ms[i]));
    }
    std::printf("\n");
    table.print();
    verifier.figure("largest_difference_us", std::round(10 * largest_us) / 10);
    verifier.figure("kernel_ms", std::round(1000 * spins.back().duration_ns() * 1e-6) / 1000);
  }

  // For tests/three_tools.py, which compares them with nsys's view of the same kernels.
  if (!times_path.empty()) {
    std::vector<double> cupti_ms;
    for (const trace::Event& e : spins) cupti_ms.push_back(e.duration_ns() * 1e-6);
    verifier.expect("the launch times are written to " + times_path,
                    spins.size() == size_t(kLaunches) && write_times(times_path, event_ms, cupti_ms));
  }

  if (!trace_path.empty()) {
    bool written = false;
    if (std::FILE* file = std::fopen(trace_path.c_str(), "w")) {
      written = std::fputs(trace::chrome_trace_json(events).c_str(), file) >= 0;
      written = std::fclose(file) == 0 && written;
    }
    verifier.expect("the Chrome trace is written to " + trace_path, written);
  }
  return verifier.finish("05_tracer_check");
}
