// Chapter 07, part 1: a memory-bound kernel, z = x + y, step by step against the copy bandwidth.
//
// Each step is one file in elementwise/. Every step is verified exactly (small whole numbers:
// their sums are exact in float) on a poisoned output, then timed; a device-to-device cudaMemcpy
// of the same size, timed in the same run, is the limit: it moves the same kind of bytes with
// no arithmetic at all.
#include <cmath>
#include <cstdio>
#include <tutorial/buffer.cuh>
#include <tutorial/device.cuh>
#include <tutorial/verify.hpp>

#include "elementwise/01_one_per_thread.cuh"
#include "elementwise/02_grid_stride.cuh"
#include "elementwise/03_float4.cuh"
#include "lab.cuh"

namespace {

using Step = lab::Step<void (*)(const float*, const float*, float*, int)>;
const Step kSteps[] = {
    {"1 one thread per element", elementwise::launch_one_per_thread},
    {"2 grid-stride loop", elementwise::launch_grid_stride},
    {"3 float4, grid-stride", elementwise::launch_float4},
};

// Runs \p step on x + shift[0], y + shift[1], z + shift[2] over \p count elements, into a
// poisoned z, and checks every element against the host's x + y (exact for small integers).
// An element the kernel skipped is NaN, and NaN never passes.
void check(tutorial::Verifier& verifier, const Step& step, const tutorial::DeviceBuffer<float>& x,
           const tutorial::DeviceBuffer<float>& y, tutorial::DeviceBuffer<float>& z,
           const std::vector<float>& hx, const std::vector<float>& hy, const int shift[3], int count,
           const char* what) {
  z.poison();
  step.launch(x.data() + shift[0], y.data() + shift[1], z.data() + shift[2], count);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> hz = z.download();
  double worst = 0.0;
  for (int i = 0; i < count; ++i) {
    const double diff =
        std::fabs(double(hz[shift[2] + i]) - (double(hx[shift[0] + i]) + hy[shift[1] + i]));
    if (std::isnan(diff)) {
      worst = NAN;
      break;
    }
    worst = std::max(worst, diff);
  }
  verifier.exact(tutorial::format("step %s, %s, n = %d", step.name, what, count), worst);
  if (shift[2] > 0)  // nothing may be written before the first output element
    verifier.expect(tutorial::format("step %s, %s: z[0..%d) untouched", step.name, what, shift[2]),
                    std::isnan(hz[0]));
}

}  // namespace

int main(int argc, char** argv) {
  const lab::ArrayLab lab{"07_elementwise",
                          "z = x + y on the GPU, three ways, each verified and timed against a "
                          "device-to-device cudaMemcpy of the same size.",
                          1 << 28, 3, "x, y, z"};
  return lab::run_steps(argc, argv, lab, [](lab::ArrayRun& run) {
    const int n = run.options.n;
    const size_t bytes = size_t(n) * sizeof(float);
    std::printf(
        "z = x + y on %d floats (%.2f GiB per array); x, y are whole numbers, so every sum is exact.\n\n",
        n, bytes / double(1ull << 30));
    const std::vector<float> hx = lab::small_integers(n, -1000, 1000, 1);
    const std::vector<float> hy = lab::small_integers(n, -1000, 1000, 2);
    tutorial::DeviceBuffer<float> x(n), y(n), z(n);
    x.upload(hx);
    y.upload(hy);

    tutorial::Verifier& verifier = run.verifier;
    const int aligned[3] = {0, 0, 0}, shifted[3] = {1, 1, 1}, mixed[3] = {1, 2, 3};
    for (const Step& step : kSteps) check(verifier, step, x, y, z, hx, hy, aligned, n, "aligned");
    // Step 3's other two paths: a common misalignment (scalar head, float4 body, scalar tail)
    // and different misalignments (fallback to the scalar loop).
    if (n > 3) {
      check(verifier, kSteps[2], x, y, z, hx, hy, shifted, n - 1, "x, y, z all offset by 1 float");
      check(verifier, kSteps[2], x, y, z, hx, hy, mixed, n - 3, "x, y, z offset by 1, 2, 3 floats");
    }
    if (!run.timed()) return;

    // Timing: x and y read, z written, 4 bytes each per element.
    const double moved = 3.0 * bytes;
    const double copy_gbs = run.copy_gbs();
    std::printf("\n### z = x + y, %d floats: %.0f MB moved per run (x, y read, z written)\n\n", n,
                moved / 1e6);
    lab::Ladder table({"Step", "Time", "GB/s", "% of copy"});
    table.add_limit({"cudaMemcpy device to device (the limit)",
                     tutorial::format_time(2.0 * bytes / (copy_gbs * 1e6)),
                     tutorial::format("%.0f", copy_gbs), "100.0%"});
    double best = 0.0;
    for (const Step& step : kSteps) {
      const tutorial::Timing t =
          lab::time_step([&] { step.launch(x.data(), y.data(), z.data(), n); }, run.options.runs);
      const double gbs = tutorial::gigabytes_per_second(moved, t.median_ms);
      best = std::max(best, gbs);
      verifier.figure("step" + lab::step_number(step.name) + "_pct_of_copy",
                      std::round(1000 * gbs / copy_gbs) / 10);
      table.add_step(t.median_ms,
                     {step.name, tutorial::format_time(t.median_ms), tutorial::format("%.0f", gbs),
                      lab::percent(gbs, copy_gbs)},
                     verifier);
    }
    table.print();
    std::printf("\n");
    verifier.goal("best step's share of the copy bandwidth", 100 * best / copy_gbs, 95, "%");
    verifier.figure("copy_gbs", std::round(copy_gbs));
    verifier.figure("best_pct_of_copy", std::round(1000 * best / copy_gbs) / 10);
  });
}
