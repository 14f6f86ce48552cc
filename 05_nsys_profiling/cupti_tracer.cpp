#include "cupti_tracer.h"

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>

namespace trace {
namespace {

// --- Which layout of each record to read -------------------------------------
// CUPTI versions its records: when fields are added, the struct gets a new name
// (CUpti_ActivityKernel9 -> CUpti_ActivityKernel10) and the old one moves to
// cupti_activity_deprecated.h; the comment on each CUPTI_ACTIVITY_KIND_* in
// cupti_activity.h names the one the library writes. Each newer version listed
// here only appends fields to the older one (diff the structs in the two
// headers), so every field read below sits at the same offset in all of them.
// [excerpt:record-versions]
#if CUPTI_API_VERSION >= 130000  // CUDA 13.x: the API version became 130000 + update
using KernelRecord = CUpti_ActivityKernel10;
#elif CUDART_VERSION >= 12000  // CUDA 12.x
using KernelRecord = CUpti_ActivityKernel9;
#else  // CUDA 11.8
using KernelRecord = CUpti_ActivityKernel8;
#endif
// [/excerpt:record-versions]
#if CUPTI_API_VERSION >= 26  // CUDA 12.8 and later
using MemcpyRecord = CUpti_ActivityMemcpy6;
using UnifiedMemoryRecord = CUpti_ActivityUnifiedMemoryCounter3;
#else
using MemcpyRecord = CUpti_ActivityMemcpy5;
using UnifiedMemoryRecord = CUpti_ActivityUnifiedMemoryCounter2;
#endif
using MemsetRecord = CUpti_ActivityMemset4;
using ApiRecord = CUpti_ActivityAPI;

// What the tracer records. CONCURRENT_KERNEL (unlike KERNEL) leaves kernels free
// to overlap, as they would untraced.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME};

// --- Names, as nsys writes them ----------------------------------------------
std::string describe(const char* call, CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return std::string(call) + " failed: " + (text ? text : "unknown CUPTI error");
}

// Kernel names arrive mangled ("_Z3addiPKfPf"); the C++ runtime can demangle them.
std::string demangle(const char* name) {
  if (name == nullptr) return "(unnamed kernel)";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                              std::free);
  return status == 0 && text ? text.get() : name;
}

// "cudaMalloc_v3020" -> "cudaMalloc": the suffix is the version that added this form.
std::string runtime_api_name(CUpti_CallbackId cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) != CUPTI_SUCCESS || !name)
    return "runtime API call " + std::to_string(cbid);
  std::string text = name;
  const size_t suffix = text.rfind("_v");
  if (suffix != std::string::npos && suffix + 2 < text.size() &&
      text.find_first_not_of("0123456789", suffix + 2) == std::string::npos)
    text.erase(suffix);
  return text;
}

const char* memcpy_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "[CUDA memcpy Host-to-Device]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "[CUDA memcpy Device-to-Host]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "[CUDA memcpy Device-to-Device]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "[CUDA memcpy Host-to-Host]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "[CUDA memcpy Peer-to-Peer]";
    default: return "[CUDA memcpy with arrays]";
  }
}

// Where copied memory lives: pageable host memory must be staged by the driver,
// pinned host memory is read by the copy engine directly.
const char* memory_kind(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "managed";
    default: return "other";
  }
}

// Why unified memory moved: a page fault, or a cudaMemPrefetchAsync.
const char* migration_cause(uint32_t flags) {
  switch (flags) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER: return "prefetch (cudaMemPrefetchAsync)";
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE: return "on demand (page fault)";
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH: return "speculative (driver)";
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_EVICTION: return "eviction";
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_ACCESS_COUNTERS: return "access counters";
    default: return "unknown cause";
  }
}

// --- From CUPTI records to events --------------------------------------------
std::optional<Event> to_event(const CUpti_Activity& record) {
  Event e;
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& k = reinterpret_cast<const KernelRecord&>(record);
      e = {Track::kKernel, demangle(k.name),
           launch_text({k.gridX, k.gridY, k.gridZ}, {k.blockX, k.blockY, k.blockZ}),
           k.start, k.end, 0, k.streamId, k.correlationId};
      return e;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& m = reinterpret_cast<const MemcpyRecord&>(record);
      e = {Track::kMemcpy, memcpy_name(m.copyKind),
           std::string(memory_kind(m.srcKind)) + " -> " + memory_kind(m.dstKind),
           m.start, m.end, m.bytes, m.streamId, m.correlationId};
      return e;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = reinterpret_cast<const MemsetRecord&>(record);
      e = {Track::kMemset, "[CUDA memset]", memory_kind(static_cast<uint8_t>(m.memoryKind)),
           m.start, m.end, m.bytes, m.streamId, m.correlationId};
      return e;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
      const auto& a = reinterpret_cast<const ApiRecord&>(record);
      e = {Track::kApi, runtime_api_name(a.cbid), "", a.start, a.end, 0, a.threadId, a.correlationId};
      return e;
    }
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER: {
      const auto& u = reinterpret_cast<const UnifiedMemoryRecord&>(record);
      switch (u.counterKind) {
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
          e = {Track::kUnifiedMemory, "[CUDA memcpy Unified Host-to-Device]", migration_cause(u.flags),
               u.start, u.end, u.value, kHostToDevice, 0};
          return e;
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
          e = {Track::kUnifiedMemory, "[CUDA memcpy Unified Device-to-Host]", migration_cause(u.flags),
               u.start, u.end, u.value, kDeviceToHost, 0};
          return e;
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
          e = {Track::kUnifiedMemory, "[Unified memory GPU page faults]", "", u.start, u.end, 0,
               kGpuPageFaults, 0};
          return e;
        default:  // a counter the tracer did not configure
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

// --- The buffers CUPTI fills ---------------------------------------------------
// CUPTI asks for an empty buffer when it needs one and hands it back full (or at
// a flush), possibly from a thread of its own: the events go into one list under
// a lock. The list is never destroyed, because CUPTI may hand back a last buffer
// while the process is exiting.
struct Collected {
  std::mutex mutex;
  std::vector<Event> events;
};
Collected& collected() {
  static Collected* instance = new Collected;
  return *instance;
}

constexpr size_t kBufferBytes = 8 << 20;
constexpr size_t kBufferAlignment = 8;  // CUPTI requires 8-byte aligned buffers

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;  // no buffer: CUPTI drops records and counts them
  *max_records = 0;                    // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  std::vector<Event> batch;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS)
    if (std::optional<Event> e = to_event(*record)) batch.push_back(std::move(*e));
  std::free(buffer);

  Collected& c = collected();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.events.insert(c.events.end(), std::make_move_iterator(batch.begin()),
                  std::make_move_iterator(batch.end()));
}

// Unified-memory migrations need their counters configured before the kind is
// enabled, and the configuration needs an initialized driver: cupti_activity.h
// says cuptiActivityConfigureUnifiedMemoryCounter "should be called after CUDA
// driver initialization". Called before it, the call accepts anything (even a
// device that does not exist) and enabling the kind then fails with
// CUPTI_ERROR_NOT_READY: this tracer's first GPU run did exactly that.
// cudaGetDeviceCount initializes the driver (cuInit) but creates no context, so
// the counters are still on before the context exists, as NVIDIA's
// unified-memory sample has them. Device 0 is the course's device
// (tutorial::require_gpu). If the GPU page-fault counter is refused, the
// migrations alone are still worth having. Returns "" on success.
std::string enable_unified_memory() {
  int devices = 0;
  if (const cudaError_t error = cudaGetDeviceCount(&devices); error != cudaSuccess || devices == 0)
    return std::string("no CUDA device to configure the counters for (cudaGetDeviceCount: ") +
           (error == cudaSuccess ? "0 devices" : cudaGetErrorName(error)) + ")";
  const CUpti_ActivityUnifiedMemoryCounterKind kinds[] = {
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT};
  CUpti_ActivityUnifiedMemoryCounterConfig config[3] = {};
  for (int i = 0; i < 3; ++i) {
    config[i].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
    config[i].kind = kinds[i];
    config[i].deviceId = 0;
    config[i].enable = 1;
  }
  CUptiResult result = cuptiActivityConfigureUnifiedMemoryCounter(config, 3);
  if (result != CUPTI_SUCCESS) result = cuptiActivityConfigureUnifiedMemoryCounter(config, 2);
  if (result != CUPTI_SUCCESS) return describe("cuptiActivityConfigureUnifiedMemoryCounter", result);
  result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  if (result != CUPTI_SUCCESS) return describe("cuptiActivityEnable(UNIFIED_MEMORY_COUNTER)", result);
  return "";
}

void disable_all() {
  for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
}

}  // namespace

// [excerpt:start]
std::string CuptiTracer::start() {
  if (running_) return "the tracer is already running";
  CUptiResult result = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (result != CUPTI_SUCCESS) return describe("cuptiActivityRegisterCallbacks", result);
  for (CUpti_ActivityKind kind : kKinds) {
    result = cuptiActivityEnable(kind);
    if (result != CUPTI_SUCCESS) {
      disable_all();
      return describe("cuptiActivityEnable", result);
    }
  }
  unified_memory_error_ = enable_unified_memory();
  running_ = true;
  return "";
}
// [/excerpt:start]

void CuptiTracer::add_phase(const std::string& name, uint64_t start_ns, uint64_t end_ns) {
  if (running_) phases_.push_back({Track::kPhase, name, "", start_ns, end_ns, 0, 0, 0});
}

std::vector<Event> CuptiTracer::stop() {
  if (!running_) return {};
  running_ = false;
  disable_all();
  // FLUSH_FORCED hands back partly filled buffers too; without it CUPTI keeps them.
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) dropped_ = dropped;

  std::vector<Event> events;
  {
    Collected& c = collected();
    std::lock_guard<std::mutex> lock(c.mutex);
    events.swap(c.events);
  }
  events.insert(events.end(), phases_.begin(), phases_.end());
  phases_.clear();
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.start_ns < b.start_ns; });
  return events;
}

CuptiTracer::~CuptiTracer() { stop(); }

uint64_t CuptiTracer::now_ns() {
  uint64_t timestamp = 0;
  cuptiGetTimestamp(&timestamp);
  return timestamp;
}

}  // namespace trace
