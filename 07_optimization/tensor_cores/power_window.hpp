// What NVML saw during one batch of the race, and each row's share of cuBLAS round by round:
// plain C++ (no CUDA, no NVML), so a host unit test can check the rules (test_power_window.cpp).
//
// The rules:
//  - a sample counts for a batch only if NVML was read entirely inside it: its read began after
//    the batch began and ended before the batch ended. A read that began during the cuBLAS batch
//    before it (700 W, capped) never counts for the row after it.
//  - the software power cap (NVML's SwPowerCap reason) is counted apart from the other reasons that
//    hold the clock down (hardware slowdown, thermal, power brake, sync boost, display clock).
//    "GPU idle" and "applications clocks setting" are not slowdowns: they count for neither.
//  - the cap is also counted over the batch's second half alone: a row that follows a capped
//    cuBLAS batch may start under a clock the power controller is still raising.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace tc {

// nvmlClocksEventReasons bits (nvml.h).
constexpr unsigned long long kReasonSwPowerCap = 0x4;
constexpr unsigned long long kReasonOtherLimits = 0x8      // hardware slowdown
                                                  | 0x10   // sync boost
                                                  | 0x20   // software thermal slowdown
                                                  | 0x40   // hardware thermal slowdown
                                                  | 0x80   // hardware power brake
                                                  | 0x100; // display clock

/// One NVML reading: when the read began and ended (seconds, any common origin), SM clock (MHz),
/// power (W), and the clock-event reasons (reasons_known false if NVML could not say).
struct NvmlSample {
  double start_s = 0, end_s = 0;
  double mhz = NAN, watts = NAN;
  unsigned long long reasons = 0;
  bool reasons_known = false;
};

/// What NVML saw during some batches: sums, so a row's batches from every round add up.
struct Drawn {
  double seconds = 0;  // wall time of the batches
  double mhz_sum = 0, watts_sum = 0;
  int samples = 0;
  int reason_samples = 0, sw_cap = 0, other_limits = 0;  // samples with the reasons known, and with each
  int late_reason_samples = 0, late_sw_cap = 0;          // the same over each batch's second half
  double mean_mhz() const { return samples ? mhz_sum / samples : NAN; }
  double mean_watts() const { return samples ? watts_sum / samples : NAN; }
  double joules() const { return mean_watts() * seconds; }
  /// Shares of the samples (0..1), NaN where NVML gave no reasons.
  double sw_cap_share() const { return reason_samples ? double(sw_cap) / reason_samples : NAN; }
  double late_sw_cap_share() const { return late_reason_samples ? double(late_sw_cap) / late_reason_samples : NAN; }
  double other_limits_share() const { return reason_samples ? double(other_limits) / reason_samples : NAN; }
  void add(const Drawn& d) {
    seconds += d.seconds;
    mhz_sum += d.mhz_sum;
    watts_sum += d.watts_sum;
    samples += d.samples;
    reason_samples += d.reason_samples;
    sw_cap += d.sw_cap;
    other_limits += d.other_limits;
    late_reason_samples += d.late_reason_samples;
    late_sw_cap += d.late_sw_cap;
  }
};

/// The samples read entirely inside [begin_s, end_s], summed.
inline Drawn window(const std::vector<NvmlSample>& samples, double begin_s, double end_s) {
  Drawn d;
  d.seconds = std::max(0.0, end_s - begin_s);
  const double middle = 0.5 * (begin_s + end_s);
  for (const NvmlSample& s : samples) {
    if (s.start_s < begin_s || s.end_s > end_s || !std::isfinite(s.mhz) || !std::isfinite(s.watts)) continue;
    d.mhz_sum += s.mhz;
    d.watts_sum += s.watts;
    ++d.samples;
    if (!s.reasons_known) continue;
    const bool capped = (s.reasons & kReasonSwPowerCap) != 0;
    ++d.reason_samples;
    d.sw_cap += capped;
    d.other_limits += (s.reasons & kReasonOtherLimits) != 0;
    if (s.start_s >= middle) {
      ++d.late_reason_samples;
      d.late_sw_cap += capped;
    }
  }
  return d;
}

/// The lowest and highest of a row's per-round shares of cuBLAS (%), and their spread.
struct Spread {
  double low = NAN, high = NAN;
  double width() const { return high - low; }
};

inline Spread spread(const std::vector<double>& shares) {
  Spread s;
  if (shares.empty()) return s;
  const auto [low, high] = std::minmax_element(shares.begin(), shares.end());
  s.low = *low;
  s.high = *high;
  return s;
}

/// The median of \p values (which must not be empty).
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/// One round's share of cuBLAS BF16 (%): the row's and the cuBLAS batch's median runs, each in
/// FLOP/s (the mma.sync ceiling row runs a different FLOP count from the GEMM).
inline double round_share(const std::vector<double>& row_ms, double row_flops, const std::vector<double>& cublas_ms,
                          double cublas_flops) {
  return 100.0 * (row_flops / median(row_ms)) / (cublas_flops / median(cublas_ms));
}

}  // namespace tc
