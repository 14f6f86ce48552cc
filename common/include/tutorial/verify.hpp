/// \file verify.hpp
/// \brief Comparing results with a CPU reference, and the `Max error:` report.
///
/// Host-only C++. Two kinds of check:
///  - exact: inputs chosen so that the exact answer is known and representable
///    (1 + 2 = 3, small integers), so anything but `Max error: 0` is a bug;
///  - within: random inputs against a float64 reference, with a stated tolerance.
/// NaN never passes either check.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>

namespace tutorial {

/// Largest |got[i] - want[i]|. Returns NaN if any difference is NaN, so that an
/// unwritten (poisoned) or broken element cannot hide behind std::max.
template <typename Got, typename Want>
double max_abs_error(const Got* got, const Want* want, size_t n) {
  double worst = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double diff = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
    if (std::isnan(diff)) return NAN;
    if (diff > worst) worst = diff;
  }
  return worst;
}

/// Largest |got[i] - value|: for results that should all equal one known value.
template <typename Got>
double max_abs_error_from(const Got* got, double value, size_t n) {
  double worst = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double diff = std::fabs(static_cast<double>(got[i]) - value);
    if (std::isnan(diff)) return NAN;
    if (diff > worst) worst = diff;
  }
  return worst;
}

/// ||got - ref|| / ||ref|| in the 2-norm, accumulated in double. NaN if any element is NaN.
/// (0 when both are all zeros.)
template <typename Got, typename Ref>
double relative_error(const Got* got, const Ref* ref, size_t n) {
  double diff2 = 0.0, ref2 = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(got[i]) - static_cast<double>(ref[i]);
    diff2 += d * d;
    ref2 += static_cast<double>(ref[i]) * static_cast<double>(ref[i]);
  }
  if (std::isnan(diff2)) return NAN;
  if (ref2 == 0.0) return diff2 == 0.0 ? 0.0 : INFINITY;
  return std::sqrt(diff2 / ref2);
}

/// Collects a program's checks and turns them into output lines and an exit code.
///
/// Each exact check prints one `Max error: <value>  (<what>)` line; the course's
/// CTest verification passes only if every such line reads exactly 0.
class Verifier {
 public:
  /// An exact check: passes only if \p max_error is exactly 0.
  bool exact(const std::string& what, double max_error) {
    const bool ok = max_error == 0.0;  // false for NaN too
    std::printf("Max error: %g  (%s)\n", max_error, what.c_str());
    record(ok);
    return ok;
  }
  /// A tolerance check: passes if \p error is a number no larger than \p tolerance.
  bool within(const std::string& what, double error, double tolerance) {
    const bool ok = error <= tolerance;  // false for NaN too
    std::printf("Relative error %.3g (tolerance %.1g): %s  (%s)\n", error, tolerance,
                ok ? "ok" : "FAILED", what.c_str());
    record(ok);
    return ok;
  }
  /// A yes/no check with a description, for results that are not numbers.
  bool expect(const std::string& what, bool ok) {
    std::printf("Check %s: %s\n", ok ? "ok" : "FAILED", what.c_str());
    record(ok);
    return ok;
  }

  int failures() const { return failures_; }
  /// 0 if every check passed, 1 otherwise.
  int exit_code() const { return failures_ == 0 ? 0 : 1; }

 private:
  void record(bool ok) {
    ++checks_;
    if (!ok) ++failures_;
  }
  int checks_ = 0;
  int failures_ = 0;
};

}  // namespace tutorial
