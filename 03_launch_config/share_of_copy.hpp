// A kernel's bandwidth as a share of a device-to-device copy's, or "n/a" where the size is
// too small for the share to mean anything.
//
// The share compares a kernel with the memory system's practical limit. Only when each call
// moves far more bytes than the L2 cache holds does that limit apply: below it, the cache
// serves part of the data and a launch's fixed cost is a large part of the time, so a "share"
// can read 200% (03_add_progression --big-n 1025 once printed 201.8%). Host-only, so it is
// unit-tested without a GPU (test_share_of_copy.cpp).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace chapter03 {

/// The threshold: each side of the comparison must move at least this many times the L2
/// cache's bytes, so that the cache could serve at most a quarter of them.
constexpr double kMeasurableL2Multiple = 4.0;

/// Whether \p bytes moved per call (the smaller of the kernel's and the copy's) are enough.
inline bool share_is_measurable(double bytes, size_t l2_bytes) {
  return bytes >= kMeasurableL2Multiple * static_cast<double>(l2_bytes);
}

/// "96.1%", or "n/a (too small to measure)" when share_is_measurable() says no.
inline std::string share_of_copy(double gbs, double copy_gbs, double bytes, size_t l2_bytes) {
  if (!share_is_measurable(bytes, l2_bytes)) return "n/a (too small to measure)";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * gbs / copy_gbs);
  return text;
}

/// Why a share is not shown, for the line under a table.
inline std::string too_small_reason(double bytes, size_t l2_bytes) {
  char text[200];
  std::snprintf(text, sizeof text,
                "each call moves %.3g MB, less than %.0f x this GPU's %.1f MB L2 cache: the cache "
                "and the launch's fixed cost, not DRAM, set the time",
                bytes / 1e6, kMeasurableL2Multiple, l2_bytes / 1e6);
  return text;
}

}  // namespace chapter03
