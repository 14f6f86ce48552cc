/// \file cupti_tracer.h
/// \brief A small tracer built on CUPTI's Activity API: what nsys records, from inside the program.
///
/// CUPTI (the CUDA Profiling Tools Interface, shipped with every toolkit) is what
/// nsys itself is built on. With the Activity API the program asks CUPTI to write
/// a record for every kernel, copy, memset, runtime API call and unified-memory
/// migration into buffers the program hands it; CUPTI time-stamps them on one
/// clock, CPU and GPU alike. This tracer turns the records into trace::Event.
///
/// \code
/// trace::CuptiTracer tracer;
/// if (std::string why = tracer.start(); !why.empty()) std::printf("no trace: %s\n", why.c_str());
/// ... CUDA work ...
/// std::vector<trace::Event> events = tracer.stop();   // after the GPU work has finished
/// \endcode
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace_report.h"

namespace trace {

/// Records CUDA activity from start() to stop(). CUPTI's activity callbacks are
/// process-wide, so at most one tracer may be running at a time.
class CuptiTracer {
 public:
  CuptiTracer() = default;
  ~CuptiTracer();  ///< stops tracing if stop() was not called
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

  /// Starts tracing. Call it before the first CUDA call to see context creation
  /// and module loading too. It initializes the CUDA driver (cudaGetDeviceCount,
  /// no context yet), which the unified-memory counters need. Returns "" on
  /// success, otherwise why CUPTI cannot trace (then nothing is recorded, and the
  /// program runs on untraced).
  std::string start();

  /// Whether start() succeeded and stop() has not been called yet.
  bool running() const { return running_; }

  /// "" if unified-memory migrations are being recorded, otherwise why not: CUPTI
  /// can refuse them alone (no device, a platform without unified-memory
  /// profiling) and trace the rest.
  const std::string& unified_memory_error() const { return unified_memory_error_; }

  /// Records a span of the program itself (a phase) on the tracer's clock.
  void add_phase(const std::string& name, uint64_t start_ns, uint64_t end_ns);

  /// Flushes CUPTI's buffers and stops tracing. Returns every event recorded,
  /// ordered by start time. Synchronize with the GPU first: work still running is
  /// not yet recorded.
  std::vector<Event> stop();

  /// Records CUPTI had to drop because no buffer was free (0 when all is well).
  uint64_t dropped_records() const { return dropped_; }

  /// The current time on CUPTI's clock, in nanoseconds (the clock of every event).
  static uint64_t now_ns();

 private:
  bool running_ = false;
  std::string unified_memory_error_;
  uint64_t dropped_ = 0;
  std::vector<Event> phases_;
};

}  // namespace trace
