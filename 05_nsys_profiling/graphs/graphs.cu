// Chapter 05, lesson "graphs": capture a stream into a CUDA graph, replay it, update it.
//
// Part 1 times a chain of dependent tiny kernels launched one by one (no synchronization between
// launches) against the same chain replayed as a graph; CUPTI states the kernels' own time.
// Part 2 updates the instantiated graph in place (cudaGraphExecUpdate) and checks the new result.
// Part 3 shows what capture refuses: a synchronizing call, and cudaMalloc against cudaMallocAsync.
// (--skip-refused leaves out the refused calls: compute-sanitizer reports their errors, made on purpose.)
// Every result is a whole number known in advance: checked exactly.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <tutorial/buffer.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>
#include <vector>

#include "cupti_tracer.h"

namespace {

constexpr int kThreads = 128;

// One link of the chain: well under a microsecond of work, and it needs the link before it.
__global__ void add_to_all(int* values, int amount) { values[threadIdx.x] += amount; }

void launch_chain(int* values, int length, int amount, cudaStream_t stream) {
  for (int k = 0; k < length; ++k) add_to_all<<<1, kThreads, 0, stream>>>(values, amount);
  CUDA_CHECK_LAUNCH();
}

// [excerpt:capture]
cudaGraphExec_t capture_chain(cudaGraph_t& graph, int* values, int length, int amount, cudaStream_t stream) {
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  launch_chain(values, length, amount, stream);  // recorded, not run
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));  // checked and prepared once (CUDA 11.4-13)
  return exec;
}
// [/excerpt:capture]

// [excerpt:update]
// Gives `exec` the parameters of `graph` (same shape) without instantiating again.
bool update_in_place(cudaGraphExec_t exec, cudaGraph_t graph) {
#if CUDART_VERSION >= 12000
  cudaGraphExecUpdateResultInfo info{};
  const cudaError_t err = cudaGraphExecUpdate(exec, graph, &info);
  const cudaGraphExecUpdateResult result = info.result;
#else  // CUDA 11.x: the failing node and the result come back through two pointers
  cudaGraphNode_t failed_node = nullptr;
  cudaGraphExecUpdateResult result{};
  const cudaError_t err = cudaGraphExecUpdate(exec, graph, &failed_node, &result);
#endif
  if (err != cudaSuccess) (void)cudaGetLastError();
  return err == cudaSuccess && result == cudaGraphExecUpdateSuccess;
}
// [/excerpt:update]

double max_error(const tutorial::DeviceBuffer<int>& values, int want) {
  const std::vector<int> got = values.download();
  return tutorial::max_abs_error_from(got.data(), double(want), got.size());
}

double microseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

// Part 3: capture, call `inside` while capturing, end the capture; says what each returned.
template <typename Inside>
void try_in_capture(tutorial::Verifier& verifier, tutorial::Table& table, const char* what, Inside&& inside,
                    bool should_work, cudaStream_t stream) {
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const cudaError_t during = inside();
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(stream, &graph);
  (void)cudaGetLastError();  // capture errors are not sticky: clear them, the context is fine
  if (graph) CUDA_CHECK(cudaGraphDestroy(graph));
  table.add_row({what, cudaGetErrorName(during), cudaGetErrorName(end)});
  const bool worked = during == cudaSuccess && end == cudaSuccess;
  verifier.expect(tutorial::format("%s %s", what, should_work ? "is captured" : "is refused"), worked == should_work);
}

__global__ void fill(int* values, int value) { values[threadIdx.x] = value; }

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("05_graphs", "A chain of tiny kernels launched one by one and as a CUDA graph.");
  cli.add_int("length", "kernels in the chain", 100, 1, 10000);
  cli.add_int("runs", "timed runs (median reported)", 50, 1, 10000);
  cli.add_flag("check-only", "verify, do not time");
  cli.add_flag("skip-refused", "leave out the calls capture refuses (their errors are on purpose)");
  cli.parse_or_exit(argc, argv);
  const int length = int(cli.get_int("length")), runs = int(cli.get_int("runs"));
  tutorial::require_gpu();
  tutorial::Verifier verifier;

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tutorial::DeviceBuffer<int> values(kThreads);

  // Part 1: the chain, eager and as a graph; each verified (length x 1 from zero).
  CUDA_CHECK(cudaMemsetAsync(values.data(), 0, values.bytes(), stream));  // the chain starts at 0
  launch_chain(values.data(), length, 1, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  verifier.exact(tutorial::format("%d kernels launched one by one", length), max_error(values, length));

  cudaGraph_t graph = nullptr;
  const auto instantiate_start = std::chrono::steady_clock::now();
  cudaGraphExec_t exec = capture_chain(graph, values.data(), length, 1, stream);
  const double capture_us = microseconds_since(instantiate_start);
  CUDA_CHECK(cudaMemsetAsync(values.data(), 0, values.bytes(), stream));  // the chain starts at 0
  CUDA_CHECK(cudaGraphLaunch(exec, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  verifier.exact(tutorial::format("the same %d kernels as one graph", length), max_error(values, length));

  if (!cli.get_flag("check-only")) {
    const tutorial::TimingPlan plan{3, 1};
    std::vector<double> eager, graphed;  // interleaved: one of each per round
    for (int r = 0; r < runs; ++r) {
      eager.push_back(tutorial::time_gpu([&] { launch_chain(values.data(), length, 1, stream); }, plan, stream).median_ms);
      graphed.push_back(tutorial::time_gpu([&] { CUDA_CHECK(cudaGraphLaunch(exec, stream)); }, plan, stream).median_ms);
    }
    const tutorial::Timing e = tutorial::summarize(eager), g = tutorial::summarize(graphed);

    // The kernels' own time: CUPTI's records of one replay.
    double kernel_us = -1;
    trace::CuptiTracer tracer;
    const std::string why = tracer.start();
    if (why.empty()) {
      CUDA_CHECK(cudaGraphLaunch(exec, stream));
      CUDA_CHECK(cudaStreamSynchronize(stream));
      uint64_t total = 0, count = 0;
      for (const trace::Event& ev : tracer.stop())
        if (ev.track == trace::Track::kKernel) total += ev.duration_ns(), ++count;
      if (count) kernel_us = total / 1e3 / count;
    } else {
      std::printf("Kernels' own time not traced: %s\n", why.c_str());
    }

    std::printf("\nPart 1: a chain of %d dependent kernels (%d threads, one add each)\n\n", length, kThreads);
    tutorial::Table table({"Way", "Chain (median)", "Range of runs", "Per kernel"});
    table.add_row({"launched one by one", tutorial::format_time(e.median_ms),
                   tutorial::format_time(e.min_ms) + " - " + tutorial::format_time(e.max_ms),
                   tutorial::format_time(e.median_ms / length)});
    table.add_row({"one graph launch", tutorial::format_time(g.median_ms),
                   tutorial::format_time(g.min_ms) + " - " + tutorial::format_time(g.max_ms),
                   tutorial::format_time(g.median_ms / length)});
    if (kernel_us >= 0)
      table.add_row({"the kernel itself (CUPTI)", "", "", tutorial::format("%.2f us", kernel_us)});
    table.print();
    std::printf("\nCapture and instantiation took %.0f us of CPU time, once.\n\n", capture_us);
    const double speedup = e.median_ms / g.median_ms;
    verifier.goal(tutorial::format("chain of %d as a graph, speed-up over one by one (moonshot 7x)", length),
                  speedup, 5.0, "x");
    verifier.figure("eager_us_per_kernel", std::round(e.median_ms / length * 1e5) / 100);
    verifier.figure("graph_us_per_kernel", std::round(g.median_ms / length * 1e5) / 100);
    verifier.figure("kernel_us", kernel_us >= 0 ? std::round(kernel_us * 100) / 100 : NAN);
    verifier.figure("speedup", std::round(speedup * 10) / 10);
    verifier.figure("capture_us", std::round(capture_us));
  }

  // Part 2: the same chain adding 3, captured again and copied into the instantiated graph.
  cudaGraph_t graph_by_3 = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  launch_chain(values.data(), length, 3, stream);
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph_by_3));
  const auto update_start = std::chrono::steady_clock::now();
  const bool updated = update_in_place(exec, graph_by_3);
  const double update_us = microseconds_since(update_start);
  verifier.expect("cudaGraphExecUpdate accepts a graph of the same shape", updated);
  CUDA_CHECK(cudaMemsetAsync(values.data(), 0, values.bytes(), stream));  // the chain starts at 0
  CUDA_CHECK(cudaGraphLaunch(exec, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  verifier.exact("the updated graph adds 3 per kernel", max_error(values, 3 * length));
  std::printf("\nPart 2: cudaGraphExecUpdate took %.0f us (capture and instantiation: %.0f us)\n", update_us,
              capture_us);

  // Part 3: what capture refuses, as this runtime reports it.
  std::printf("\nPart 3: calls made while the stream is being captured\n\n");
  tutorial::Table refused({"Call during capture", "The call returned", "cudaStreamEndCapture returned"});
  if (!cli.get_flag("skip-refused")) {
    try_in_capture(verifier, refused, "cudaStreamSynchronize",
                   [&] { return cudaStreamSynchronize(stream); }, false, stream);
    int* scratch = nullptr;
    try_in_capture(verifier, refused, "cudaMalloc", [&] { return cudaMalloc(&scratch, 4096); }, false, stream);
    if (scratch) CUDA_CHECK(cudaFree(scratch));  // in case a runtime allowed it
  }
  // [excerpt:malloc-async]
  cudaGraph_t with_memory = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  int* temporary = nullptr;
  CUDA_CHECK(cudaMallocAsync(&temporary, values.bytes(), stream));  // becomes a memory node
  fill<<<1, kThreads, 0, stream>>>(temporary, 42);
  CUDA_CHECK(cudaMemcpyAsync(values.data(), temporary, values.bytes(), cudaMemcpyDeviceToDevice, stream));
  CUDA_CHECK(cudaFreeAsync(temporary, stream));  // freed inside the graph, too
  CUDA_CHECK(cudaStreamEndCapture(stream, &with_memory));
  // [/excerpt:malloc-async]
  refused.add_row({"cudaMallocAsync + cudaFreeAsync", "cudaSuccess", "cudaSuccess"});
  refused.print();
  cudaGraphExec_t memory_exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiateWithFlags(&memory_exec, with_memory, 0));
  // Poisoned in the graph's stream: `stream` does not wait for the legacy default stream.
  CUDA_CHECK(cudaMemsetAsync(values.data(), 0xFF, values.bytes(), stream));
  CUDA_CHECK(cudaGraphLaunch(memory_exec, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::printf("\n");
  verifier.exact("a graph that allocates, fills, copies and frees", max_error(values, 42));

  CUDA_CHECK(cudaGraphExecDestroy(memory_exec));
  CUDA_CHECK(cudaGraphDestroy(with_memory));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph_by_3));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return verifier.finish("05_graphs");
}
