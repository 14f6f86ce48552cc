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
#include <utility>
#include <vector>

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

/// A string as a JSON string literal (quotes, backslashes and control characters escaped).
inline std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// A number as JSON: finite values with up to 6 significant digits, anything else as null.
inline std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

/// Collects a program's checks, goals and headline figures, prints them as the
/// lesson's lines, and turns them into an exit code and one machine-readable line.
///
/// Each exact check prints `Max error: <value>  (<what>)`. finish() prints the
/// program's last line, `SUMMARY {...}` (JSON: checks, failures, goals, figures),
/// which the GPU check's record and the READMEs read; the exit code is the verdict.
class Verifier {
 public:
  /// An exact check: passes only if \p max_error is exactly 0.
  bool exact(const std::string& what, double max_error) {
    const bool ok = max_error == 0.0;  // false for NaN too
    std::printf("Max error: %g  (%s)\n", max_error, what.c_str());
    ++exact_;
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

  /// A performance goal, e.g. goal("share of copy bandwidth", 97.3, 95, "%"): printed as
  /// `Goal: ... met` and recorded for the summary. A goal is a measurement, not a check:
  /// a slower GPU may miss it, so it never changes the exit code.
  bool goal(const std::string& what, double value, double at_least, const std::string& unit) {
    const bool met = value >= at_least;  // false for NaN too
    std::printf("Goal: %s >= %g%s: %.1f%s, %s\n", what.c_str(), at_least, unit.c_str(), value,
                unit.c_str(), met ? "met" : "NOT met");
    goals_.push_back("{\"goal\":" + json_string(what) + ",\"value\":" + json_number(value) +
                     ",\"at_least\":" + json_number(at_least) + ",\"unit\":" + json_string(unit) +
                     ",\"met\":" + (met ? "true" : "false") + "}");
    return met;
  }
  /// A headline figure the READMEs quote (e.g. figure("speedup", 13403)); printed nowhere
  /// but the summary line, so print it in the lesson's own words too.
  void figure(const std::string& key, double value) { figures_.emplace_back(key, json_number(value)); }

  int checks() const { return checks_; }
  int failures() const { return failures_; }
  /// 0 if every check passed (and at least one ran), 1 otherwise.
  int exit_code() const { return checks_ > 0 && failures_ == 0 ? 0 : 1; }

  /// Prints the `SUMMARY {...}` line for \p program and returns exit_code().
  int finish(const std::string& program) const {
    std::string line = "SUMMARY {\"program\":" + json_string(program) +
                       ",\"checks\":" + std::to_string(checks_) +
                       ",\"failed\":" + std::to_string(failures_) +
                       ",\"exact\":" + std::to_string(exact_) + ",\"goals\":[";
    for (size_t i = 0; i < goals_.size(); ++i) line += (i ? "," : "") + goals_[i];
    line += "],\"figures\":{";
    for (size_t i = 0; i < figures_.size(); ++i)
      line += (i ? "," : "") + json_string(figures_[i].first) + ":" + figures_[i].second;
    line += "}}";
    std::printf("\n%s\n", line.c_str());
    std::fflush(stdout);
    return exit_code();
  }

 private:
  void record(bool ok) {
    ++checks_;
    if (!ok) ++failures_;
  }
  int checks_ = 0;
  int failures_ = 0;
  int exact_ = 0;
  std::vector<std::string> goals_;
  std::vector<std::pair<std::string, std::string>> figures_;
};

}  // namespace tutorial
