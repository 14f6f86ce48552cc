// Chapter 07, part 4: kernel fusion. GELU as eight elementwise kernels vs one kernel: the bytes
// each moves are predicted by counting passes over memory, and measured.
//
// Checks for every step, each on a poisoned output:
//  - exact: x in {-16..-10, 0, 10..16}. There tanh saturates to exactly +-1 in float, so
//    gelu(x) is exactly x (x >= 10) or 0 (x <= -10), and gelu(0) = 0: every element must be
//    written, from the right input, bit for bit.
//  - random: x uniform in [-5, 5) against a float64 GELU on the host, relative error (2-norm)
//    <= 1e-5 (tanhf is accurate to 2 ulp; each step rounds a few times).
#include <cmath>
#include <cstdio>
#include <tutorial/buffer.cuh>
#include <tutorial/device.cuh>
#include <tutorial/verify.hpp>

#include "fusion/01_unfused.cuh"
#include "fusion/02_fused.cuh"
#include "fusion/03_fused_float4.cuh"
#include "lab.cuh"

namespace {

// y = gelu(x); t and u are scratch arrays of n floats for the unfused version.
using Launch = void (*)(const float* x, float* y, int n, float* t, float* u);
struct Step {
  const char* name;
  Launch launch;
  int kernels;
  int passes;  // arrays of n floats read or written, counted from the code
};
const Step kSteps[] = {
    {"1 unfused, one kernel per operation", fusion::launch_unfused, 8, 18},
    {"2 fused, one kernel", fusion::launch_fused, 1, 2},
    {"3 fused, float4", fusion::launch_fused_float4, 1, 2},
};

double gelu_reference(double x) {
  const double sqrt_2_over_pi = 0.7978845608028654;
  return 0.5 * x * (1.0 + std::tanh(sqrt_2_over_pi * (x + 0.044715 * x * x * x)));
}

}  // namespace

int main(int argc, char** argv) {
  const lab::ArrayLab lab{"07_fusion",
                          "GELU (tanh approximation) as eight elementwise kernels and as one fused "
                          "kernel: bytes moved, predicted and measured.",
                          1 << 26, 4, "x, y, two scratch arrays"};
  return lab::run_steps(argc, argv, lab, [](lab::ArrayRun& run) {
    const int n = run.options.n;
    const size_t bytes = size_t(n) * sizeof(float);
    std::printf(
        "y = gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) on %d floats (%.2f GiB per "
        "array).\n\n",
        n, bytes / double(1ull << 30));
    tutorial::DeviceBuffer<float> x(n), y(n), t(n), u(n);
    tutorial::Verifier& verifier = run.verifier;

    std::vector<float> hx(n), exact(n);
    for (int i = 0; i < n; ++i) {
      const int k = static_cast<int>(lab::mix(1, i) % 15);  // 0..14 -> -16..-10, 0, 10..16
      hx[i] = k < 7 ? float(-16 + k) : k == 7 ? 0.0f : float(2 + k);
      exact[i] = hx[i] > 0.0f ? hx[i] : 0.0f;
    }
    // One step's y for the x on the GPU, computed into a poisoned y: an element it skips stays NaN.
    auto output_of = [&](const Step& step) {
      y.poison();
      step.launch(x.data(), y.data(), n, t.data(), u.data());
      CUDA_CHECK(cudaDeviceSynchronize());
      return y.download();
    };

    x.upload(hx);
    for (const Step& step : kSteps)
      verifier.exact(tutorial::format("step %s, x in {-16..-10, 0, 10..16}", step.name),
                     tutorial::max_abs_error(output_of(step).data(), exact.data(), n));

    hx = lab::uniform(n, -5.0f, 5.0f, 2);
    std::vector<double> want(n);
    for (int i = 0; i < n; ++i) want[i] = gelu_reference(hx[i]);
    x.upload(hx);
    for (const Step& step : kSteps)
      verifier.within(tutorial::format("step %s, x uniform in [-5, 5) vs float64", step.name),
                      tutorial::relative_error(output_of(step).data(), want.data(), n), 1e-5);
    if (!run.timed()) return;

    const double copy_gbs = run.copy_gbs();
    std::printf("\n### GELU on %d floats; copy bandwidth %.0f GB/s\n\n", n, copy_gbs);
    std::printf("Effective GB/s counts only the bytes the answer needs: x read once, y written once.\n\n");
    lab::Ladder table({"Step", "Kernels", "Bytes moved (predicted)", "Time", "Effective GB/s",
                       "% of copy (effective)", "GB/s moved", "Time vs step 3"});
    std::vector<tutorial::Timing> timing;
    for (const Step& step : kSteps)
      timing.push_back(lab::time_step([&] { step.launch(x.data(), y.data(), n, t.data(), u.data()); },
                                      run.options.runs));
    const double fastest = timing.back().median_ms;
    for (size_t s = 0; s < timing.size(); ++s) {
      const double ms = timing[s].median_ms;
      const double effective = tutorial::gigabytes_per_second(2.0 * bytes, ms);
      const double moved = tutorial::gigabytes_per_second(double(kSteps[s].passes) * bytes, ms);
      verifier.figure(tutorial::format("step%zu_pct_of_copy", s + 1), std::round(1000 * effective / copy_gbs) / 10);
      verifier.figure(tutorial::format("step%zu_moved_pct_of_copy", s + 1), std::round(1000 * moved / copy_gbs) / 10);
      table.add_step(ms,
                     {kSteps[s].name, std::to_string(kSteps[s].kernels),
                      tutorial::format("%d x %.0f MB = %.0f MB", kSteps[s].passes, bytes / 1e6,
                                       kSteps[s].passes * bytes / 1e6),
                      tutorial::format_time(ms), tutorial::format("%.0f", effective),
                      lab::percent(effective, copy_gbs), tutorial::format("%.0f", moved),
                      tutorial::format("%.2fx", ms / fastest)},
                     verifier);
    }
    table.print();
    std::printf(
        "\nPredicted unfused / fused time: %d / %d passes = %.1fx. Measured (step 1 / step 3): %.1fx.\n",
        kSteps[0].passes, kSteps[2].passes, double(kSteps[0].passes) / kSteps[2].passes,
        timing[0].median_ms / fastest);
    verifier.figure("fused_speedup", std::round(10 * timing[0].median_ms / fastest) / 10);
  });
}
