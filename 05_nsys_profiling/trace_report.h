/// \file trace_report.h
/// \brief What a trace holds, and the two ways this chapter shows it: nsys-style
/// summary tables and a Chrome trace file.
///
/// Plain C++, no CUDA: the CUPTI tracer (cupti_tracer.h) turns activity records
/// into these events, and everything here is unit-tested without a GPU.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace trace {

/// Which row of the timeline an event belongs to, and which summary table.
enum class Track {
  kPhase,          ///< a phase of the program (the NVTX ranges), CPU clock
  kApi,            ///< a CUDA runtime API call, on the CPU thread that made it
  kKernel,         ///< a kernel, on the GPU
  kMemcpy,         ///< an explicit cudaMemcpy*, on the GPU's copy engines
  kMemset,         ///< a cudaMemset*, on the GPU
  kUnifiedMemory,  ///< a unified-memory migration or a group of GPU page faults
};

/// Lanes of the unified-memory track (Event::lane), one per kind of event.
enum UnifiedMemoryLane : uint32_t {
  kHostToDevice = 1,
  kDeviceToHost = 2,
  kGpuPageFaults = 3,
};

/// One thing that happened, from \p start_ns to \p end_ns on one clock (CUPTI's).
struct Event {
  Track track = Track::kApi;
  std::string name;        ///< "cudaMalloc", "add(int, float const*, float*)", "[CUDA memset]"
  std::string detail;      ///< what tells rows of one name apart: "<<<4096, 256>>>", "pageable -> device"
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t bytes = 0;      ///< bytes copied, set or migrated; 0 where it means nothing
  uint32_t lane = 0;       ///< stream id (GPU work), thread id (API calls), UnifiedMemoryLane
  uint32_t correlation = 0;  ///< links a GPU event to the API call that asked for it (0: none)

  /// The duration; 0 for events that carry a single time stamp.
  uint64_t duration_ns() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
};

/// One row of a summary table: all events of one track with the same name and detail.
struct SummaryRow {
  std::string name;
  std::string detail;
  size_t count = 0;
  uint64_t total_ns = 0;
  uint64_t min_ns = 0;
  uint64_t max_ns = 0;
  double average_ns = 0;
  double median_ns = 0;
  uint64_t bytes = 0;       ///< summed over the events
  double percent = 0;       ///< share of the track's total time
};

/// Groups the events of \p track by (name, detail), busiest first, as nsys's
/// `cuda_api_sum`, `cuda_gpu_kern_sum` and `cuda_gpu_mem_time_sum` reports do.
std::vector<SummaryRow> summarize(const std::vector<Event>& events, Track track);
/// The same over several tracks at once (one table for copies, memsets and migrations).
std::vector<SummaryRow> summarize(const std::vector<Event>& events, std::vector<Track> tracks);

/// A launch configuration as the kernel table shows it: "<<<4096, 256>>>", or
/// "<<<(64, 64, 1), (16, 16, 1)>>>" when a grid or block has more than one dimension.
std::string launch_text(std::array<int, 3> grid, std::array<int, 3> block);

/// Prints every non-empty summary: phases, API calls, kernels, memory operations.
void print_report(const std::vector<Event>& events, std::FILE* out = stdout);

/// \p text as the body of a JSON string (quotes, backslashes and control characters escaped).
std::string json_escape(const std::string& text);

/// The events in the Chrome trace event format (JSON object with "traceEvents"):
/// each event is a complete ("X") event with ts and dur in microseconds since the
/// first event, on a process (CPU, GPU, unified memory) and a thread (stream, API
/// thread) named by metadata ("M") events. chrome://tracing and ui.perfetto.dev open it.
std::string chrome_trace_json(const std::vector<Event>& events);

/// A byte count with a readable decimal unit: "512 B", "4.19 MB".
std::string format_bytes(uint64_t bytes);

}  // namespace trace
