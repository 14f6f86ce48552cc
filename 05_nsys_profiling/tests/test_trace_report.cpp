// Unit tests of the summaries and the Chrome trace writer: no GPU, no CUPTI.
#include <string>
#include <vector>

#include "catch.hpp"
#include "trace_report.h"

using trace::Event;
using trace::Track;

namespace {
Event make(Track track, std::string name, uint64_t start, uint64_t end, uint64_t bytes = 0,
           std::string detail = "") {
  Event e;
  e.track = track;
  e.name = std::move(name);
  e.detail = std::move(detail);
  e.start_ns = start;
  e.end_ns = end;
  e.bytes = bytes;
  e.lane = 7;
  return e;
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("summarize groups by name and detail, busiest first") {
  const std::vector<Event> events = {
      make(Track::kKernel, "add", 0, 100, 0, "<<<1, 256>>>"),
      make(Track::kKernel, "add", 200, 500, 0, "<<<1, 256>>>"),
      make(Track::kKernel, "add", 600, 800, 0, "<<<1, 256>>>"),
      make(Track::kKernel, "add", 900, 910, 0, "<<<4096, 256>>>"),
      make(Track::kApi, "cudaMalloc", 0, 5000),  // another track: left out
  };
  const auto rows = trace::summarize(events, Track::kKernel);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].detail == "<<<1, 256>>>");
  CHECK(rows[0].count == 3);
  CHECK(rows[0].total_ns == 600);
  CHECK(rows[0].min_ns == 100);
  CHECK(rows[0].max_ns == 300);
  CHECK(rows[0].average_ns == Approx(200.0));
  CHECK(rows[0].median_ns == Approx(200.0));
  CHECK(rows[0].percent == Approx(100.0 * 600 / 610));
  CHECK(rows[1].detail == "<<<4096, 256>>>");
  CHECK(rows[1].count == 1);
  CHECK(rows[1].median_ns == Approx(10.0));
}

TEST_CASE("the median of an even count is the mean of the middle two") {
  const std::vector<Event> events = {make(Track::kApi, "cudaFree", 0, 10), make(Track::kApi, "cudaFree", 0, 40),
                                     make(Track::kApi, "cudaFree", 0, 20), make(Track::kApi, "cudaFree", 0, 1000)};
  const auto rows = trace::summarize(events, Track::kApi);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].median_ns == Approx(30.0));
}

TEST_CASE("bytes add up over a row, and several tracks make one table") {
  const std::vector<Event> events = {
      make(Track::kMemcpy, "[CUDA memcpy Host-to-Device]", 0, 10, 1'000'003, "pinned -> device"),
      make(Track::kMemcpy, "[CUDA memcpy Host-to-Device]", 20, 30, 17, "pinned -> device"),
      make(Track::kMemset, "[CUDA memset]", 40, 70, 4'099, "device"),
      make(Track::kUnifiedMemory, "[CUDA memcpy Unified Host-to-Device]", 80, 90, 65'536),
  };
  const auto rows = trace::summarize(events, {Track::kMemcpy, Track::kMemset, Track::kUnifiedMemory});
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].name == "[CUDA memset]");
  CHECK(rows[0].bytes == 4'099);
  CHECK(rows[0].percent == Approx(50.0));
  CHECK(rows[1].name == "[CUDA memcpy Host-to-Device]");
  CHECK(rows[1].bytes == 1'000'020);
  CHECK(rows[1].count == 2);
}

TEST_CASE("an event whose end precedes its start lasts 0, not 2^64 ns") {
  CHECK(make(Track::kUnifiedMemory, "fault", 100, 50).duration_ns() == 0);
  CHECK(make(Track::kUnifiedMemory, "fault", 100, 150).duration_ns() == 50);
}

TEST_CASE("json_escape escapes what JSON requires") {
  CHECK(trace::json_escape("plain") == "plain");
  CHECK(trace::json_escape("a \"quoted\" \\ path") == "a \\\"quoted\\\" \\\\ path");
  CHECK(trace::json_escape("line\nbreak\ttab") == "line\\nbreak\\ttab");
  CHECK(trace::json_escape(std::string("bell\x07", 5)) == "bell\\u0007");
  CHECK(trace::json_escape("add<float>(int, float const*)") == "add<float>(int, float const*)");
}

TEST_CASE("the Chrome trace holds one complete event per event, times in microseconds") {
  std::vector<Event> events = {
      make(Track::kPhase, "add many blocks", 1'000'000, 1'500'000),
      make(Track::kApi, "cudaLaunchKernel", 1'000'500, 1'003'000),
      make(Track::kKernel, "add(int, float const*, float*)", 1'004'000, 1'011'500, 0, "<<<4096, 256>>>"),
      make(Track::kUnifiedMemory, "[CUDA memcpy Unified Host-to-Device]", 1'020'000, 1'030'000, 4096),
  };
  events[2].correlation = 42;
  const std::string json = trace::chrome_trace_json(events);
  CHECK(json.rfind("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [", 0) == 0);
  CHECK(json.find("]}") != std::string::npos);
  CHECK(count(json, "\"ph\": \"X\"") == 4);
  // Times are relative to the first event and in microseconds, with ns precision.
  CHECK(json.find("\"name\": \"add many blocks\", \"cat\": \"phase\", \"pid\": 1, \"tid\": 0, "
                  "\"ts\": 0.000, \"dur\": 500.000") != std::string::npos);
  CHECK(json.find("\"cat\": \"kernel\", \"pid\": 2, \"tid\": 7, \"ts\": 4.000, \"dur\": 7.500, "
                  "\"args\": {\"detail\": \"<<<4096, 256>>>\", \"correlation\": 42}") != std::string::npos);
  CHECK(json.find("\"args\": {\"bytes\": 4096}") != std::string::npos);
  // Every process and thread in use is named once.
  CHECK(count(json, "\"process_name\"") == 3);
  CHECK(json.find("\"args\": {\"name\": \"stream 7\"}") != std::string::npos);
  CHECK(json.find("\"args\": {\"name\": \"phases (NVTX ranges)\"}") != std::string::npos);
  CHECK(json.find("\"args\": {\"name\": \"CUDA API, thread 7\"}") != std::string::npos);
  // No trailing comma before the closing bracket (strict JSON parsers reject it).
  CHECK(json.find(",\n]") == std::string::npos);
}

TEST_CASE("an empty trace is still valid JSON") {
  CHECK(trace::chrome_trace_json({}) == "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n\n]}\n");
}

TEST_CASE("launch_text writes launch configurations as the source does") {
  CHECK(trace::launch_text({4096, 1, 1}, {256, 1, 1}) == "<<<4096, 256>>>");
  CHECK(trace::launch_text({64, 64, 1}, {16, 16, 1}) == "<<<(64, 64, 1), (16, 16, 1)>>>");
}

TEST_CASE("format_bytes uses decimal units") {
  CHECK(trace::format_bytes(512) == "512 B");
  CHECK(trace::format_bytes(4'099) == "4.1 kB");
  CHECK(trace::format_bytes(4'194'304) == "4.19 MB");
  CHECK(trace::format_bytes(1'073'741'824) == "1.07 GB");
}
