#include "trace_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <tutorial/table.hpp>

namespace trace {
namespace {

std::string time_text(double ns) { return tutorial::format_time(ns * 1e-6); }

double median_of(std::vector<uint64_t> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? double(values[n / 2]) : 0.5 * (double(values[n / 2 - 1]) + double(values[n / 2]));
}

// The Chrome trace groups threads ("tid") into processes ("pid"): the CPU side,
// the GPU's streams, and unified-memory traffic each get one.
constexpr int kCpuProcess = 1, kGpuProcess = 2, kUnifiedMemoryProcess = 3;

int process_of(Track track) {
  switch (track) {
    case Track::kPhase:
    case Track::kApi: return kCpuProcess;
    case Track::kUnifiedMemory: return kUnifiedMemoryProcess;
    default: return kGpuProcess;
  }
}

const char* category_of(Track track) {
  switch (track) {
    case Track::kPhase: return "phase";
    case Track::kApi: return "cuda_api";
    case Track::kKernel: return "kernel";
    case Track::kMemcpy: return "memcpy";
    case Track::kMemset: return "memset";
    case Track::kUnifiedMemory: return "unified_memory";
  }
  return "other";
}

// Phases go on thread 0 of the CPU process: CUPTI's thread ids are never 0.
uint32_t thread_of(const Event& e) { return e.track == Track::kPhase ? 0 : e.lane; }

std::string thread_label(Track track, uint32_t lane) {
  switch (track) {
    case Track::kPhase: return "phases (NVTX ranges)";
    case Track::kApi: return "CUDA API, thread " + std::to_string(lane);
    case Track::kUnifiedMemory:
      return lane == kHostToDevice   ? "migrations host to device"
             : lane == kDeviceToHost ? "migrations device to host"
                                     : "GPU page faults";
    default: return "stream " + std::to_string(lane);
  }
}

void print_heading(std::FILE* out, const char* title) { std::fprintf(out, "\n%s\n\n", title); }

// The columns every nsys summary has: share, total, count, average, median, min, max.
std::vector<std::string> timing_cells(const SummaryRow& r) {
  return {tutorial::format("%.1f", r.percent), time_text(double(r.total_ns)), std::to_string(r.count),
          time_text(r.average_ns), time_text(r.median_ns), time_text(double(r.min_ns)),
          time_text(double(r.max_ns))};
}
const std::vector<std::string> kTimingHeader = {"Time (%)", "Total", "Count", "Avg", "Med", "Min", "Max"};

std::vector<std::string> with(std::vector<std::string> cells, std::vector<std::string> more) {
  cells.insert(cells.end(), more.begin(), more.end());
  return cells;
}

}  // namespace

std::vector<SummaryRow> summarize(const std::vector<Event>& events, std::vector<Track> tracks) {
  std::map<std::pair<std::string, std::string>, std::vector<const Event*>> groups;
  uint64_t grand_total = 0;
  for (const Event& e : events) {
    if (std::find(tracks.begin(), tracks.end(), e.track) == tracks.end()) continue;
    groups[{e.name, e.detail}].push_back(&e);
    grand_total += e.duration_ns();
  }
  std::vector<SummaryRow> rows;
  for (const auto& [key, members] : groups) {
    SummaryRow row;
    row.name = key.first;
    row.detail = key.second;
    row.count = members.size();
    std::vector<uint64_t> durations;
    for (const Event* e : members) {
      durations.push_back(e->duration_ns());
      row.total_ns += e->duration_ns();
      row.bytes += e->bytes;
    }
    row.min_ns = *std::min_element(durations.begin(), durations.end());
    row.max_ns = *std::max_element(durations.begin(), durations.end());
    row.average_ns = double(row.total_ns) / double(row.count);
    row.median_ns = median_of(std::move(durations));
    row.percent = grand_total ? 100.0 * double(row.total_ns) / double(grand_total) : 0.0;
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const SummaryRow& a, const SummaryRow& b) { return a.total_ns > b.total_ns; });
  return rows;
}

std::vector<SummaryRow> summarize(const std::vector<Event>& events, Track track) {
  return summarize(events, std::vector<Track>{track});
}

std::string launch_text(std::array<int, 3> grid, std::array<int, 3> block) {
  if (grid[1] == 1 && grid[2] == 1 && block[1] == 1 && block[2] == 1)
    return tutorial::format("<<<%d, %d>>>", grid[0], block[0]);
  return tutorial::format("<<<(%d, %d, %d), (%d, %d, %d)>>>", grid[0], grid[1], grid[2], block[0],
                          block[1], block[2]);
}

void print_report(const std::vector<Event>& events, std::FILE* out) {
  // Phases in program order: they say what each stretch of the timeline was for.
  std::vector<const Event*> phases;
  uint64_t origin = UINT64_MAX;
  for (const Event& e : events) {
    origin = std::min(origin, e.start_ns);
    if (e.track == Track::kPhase) phases.push_back(&e);
  }
  std::sort(phases.begin(), phases.end(),
            [](const Event* a, const Event* b) { return a->start_ns < b->start_ns; });
  if (!phases.empty()) {
    print_heading(out, "Phases (the NVTX ranges; nsys: nvtx_sum)");
    tutorial::Table table({"Phase", "Starts at", "Duration"});
    for (const Event* p : phases)
      table.add_row({p->name, time_text(double(p->start_ns - origin)), time_text(double(p->duration_ns()))});
    table.print(out);
  }

  const auto api = summarize(events, Track::kApi);
  if (!api.empty()) {
    print_heading(out, "CUDA API calls, CPU time (nsys: cuda_api_sum)");
    tutorial::Table table(with(kTimingHeader, {"Name"}));
    for (const SummaryRow& r : api) table.add_row(with(timing_cells(r), {r.name}));
    table.print(out);
  }

  const auto kernels = summarize(events, Track::kKernel);
  if (!kernels.empty()) {
    print_heading(out, "GPU kernels (nsys: cuda_gpu_kern_sum)");
    tutorial::Table table(with(kTimingHeader, {"Name", "Launch"}));
    for (const SummaryRow& r : kernels) table.add_row(with(timing_cells(r), {r.name, r.detail}));
    table.print(out);
  }

  const auto memory = summarize(events, {Track::kMemcpy, Track::kMemset, Track::kUnifiedMemory});
  if (!memory.empty()) {
    print_heading(out, "GPU memory operations (nsys: cuda_gpu_mem_time_sum and cuda_gpu_mem_size_sum)");
    tutorial::Table table(with(kTimingHeader, {"Bytes", "GB/s", "Operation", "Detail"}));
    for (const SummaryRow& r : memory) {
      const bool has_bytes = r.bytes > 0 && r.total_ns > 0;
      table.add_row(with(timing_cells(r),
                         {has_bytes ? format_bytes(r.bytes) : "-",
                          // bytes per nanosecond is gigabytes (1e9 B) per second
                          has_bytes ? tutorial::format("%.1f", double(r.bytes) / double(r.total_ns)) : "-",
                          r.name, r.detail}));
    }
    table.print(out);
  }
}

std::string json_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += tutorial::format("\\u%04x", static_cast<unsigned>(c));
        else
          out += c;
    }
  }
  return out;
}

std::string chrome_trace_json(const std::vector<Event>& events) {
  uint64_t origin = UINT64_MAX;
  for (const Event& e : events) origin = std::min(origin, e.start_ns);

  std::string json = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  bool first = true;
  auto append = [&](const std::string& item) {
    json += (first ? "  " : ",\n  ") + item;
    first = false;
  };

  // Metadata events: a name for each process and each thread that holds events.
  const std::map<int, const char*> process_names = {
      {kCpuProcess, "CPU"}, {kGpuProcess, "GPU"}, {kUnifiedMemoryProcess, "Unified memory"}};
  std::set<int> processes;
  std::set<std::pair<int, uint32_t>> threads;
  for (const Event& e : events) {
    const int pid = process_of(e.track);
    if (processes.insert(pid).second)
      append(tutorial::format("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, "
                              "\"args\": {\"name\": \"%s\"}}",
                              pid, process_names.at(pid)));
    if (threads.insert({pid, thread_of(e)}).second)
      append(tutorial::format("{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %u, "
                              "\"args\": {\"name\": \"%s\"}}",
                              pid, thread_of(e), json_escape(thread_label(e.track, e.lane)).c_str()));
  }

  // Complete events: a start ("ts") and a duration ("dur"), both in microseconds.
  for (const Event& e : events) {
    std::string args;
    if (!e.detail.empty()) args += "\"detail\": \"" + json_escape(e.detail) + "\"";
    if (e.bytes) args += std::string(args.empty() ? "" : ", ") + "\"bytes\": " + std::to_string(e.bytes);
    if (e.correlation)
      args += std::string(args.empty() ? "" : ", ") + "\"correlation\": " + std::to_string(e.correlation);
    append(tutorial::format("{\"ph\": \"X\", \"name\": \"%s\", \"cat\": \"%s\", \"pid\": %d, \"tid\": %u, "
                            "\"ts\": %.3f, \"dur\": %.3f, \"args\": {%s}}",
                            json_escape(e.name).c_str(), category_of(e.track), process_of(e.track),
                            thread_of(e), double(e.start_ns - origin) * 1e-3, double(e.duration_ns()) * 1e-3,
                            args.c_str()));
  }
  json += "\n]}\n";
  return json;
}

std::string format_bytes(uint64_t bytes) {
  if (bytes < 1000) return std::to_string(bytes) + " B";
  if (bytes < 1000 * 1000) return tutorial::format("%.3g kB", double(bytes) * 1e-3);
  if (bytes < 1000ull * 1000 * 1000) return tutorial::format("%.3g MB", double(bytes) * 1e-6);
  return tutorial::format("%.3g GB", double(bytes) * 1e-9);
}

}  // namespace trace
