// share_of_copy.hpp: a share of the copy bandwidth is shown only at sizes that can measure it.
#include "share_of_copy.hpp"

#include "catch.hpp"

namespace {
constexpr size_t kL2 = 50u << 20;  // an H100's L2 cache: 50 MiB
}

TEST_CASE("a share is shown only when a call moves at least 4 x the L2 cache") {
  CHECK(chapter03::share_is_measurable(4.0 * kL2, kL2));
  CHECK_FALSE(chapter03::share_is_measurable(4.0 * kL2 - 1, kL2));
  CHECK_FALSE(chapter03::share_is_measurable(0, kL2));
}

TEST_CASE("03_add_progression --big-n 1025 no longer reports 201.8% of the copy") {
  const double bytes = 2.0 * 1025 * sizeof(float);  // the copy's read + write at --big-n 1025
  CHECK(chapter03::share_of_copy(201.8, 100.0, bytes, kL2) == "n/a (too small to measure)");
  CHECK(chapter03::too_small_reason(bytes, kL2).find("less than 4 x this GPU's 52.4 MB L2 cache") !=
        std::string::npos);
}

TEST_CASE("at a measurable size the share is printed with one decimal") {
  CHECK(chapter03::share_of_copy(2890.0, 3010.0, 2.0 * (1u << 30), kL2) == "96.0%");
}
