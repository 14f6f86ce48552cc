// power_window.hpp: which NVML samples count for a batch, and what "capped" means.
#include "power_window.hpp"

#include "catch.hpp"

namespace {

tc::NvmlSample sample(double start_s, double watts, unsigned long long reasons) {
  tc::NvmlSample s;
  s.start_s = start_s;
  s.end_s = start_s + 0.0005;  // a read takes about half a millisecond
  s.mhz = 1500;
  s.watts = watts;
  s.reasons = reasons;
  s.reasons_known = true;
  return s;
}

}  // namespace

TEST_CASE("a batch at 415 W without the SwPowerCap bit reads not capped") {
  std::vector<tc::NvmlSample> samples;
  for (int i = 0; i < 100; ++i) samples.push_back(sample(1.0 + 0.002 * i, 415, 0x1 | 0x2));  // idle, app clocks
  const tc::Drawn d = tc::window(samples, 1.0, 1.2);
  CHECK(d.samples == 100);
  CHECK(d.sw_cap_share() == 0.0);
  CHECK(d.other_limits_share() == 0.0);
  CHECK(d.mean_watts() == Approx(415));
}

TEST_CASE("samples read before the batch began or after it ended do not count") {
  // The cuBLAS batch before: 700 W and capped, up to t = 1.0; the row's batch: 1.0 .. 1.2.
  std::vector<tc::NvmlSample> samples;
  for (int i = 0; i < 50; ++i) samples.push_back(sample(0.9 + 0.002 * i, 700, tc::kReasonSwPowerCap));
  samples.push_back(sample(0.9998, 700, tc::kReasonSwPowerCap));  // began before, ended inside
  for (int i = 0; i < 99; ++i) samples.push_back(sample(1.0 + 0.002 * i, 415, 0));
  samples.push_back(sample(1.1998, 415, tc::kReasonSwPowerCap));  // began inside, ended after
  const tc::Drawn d = tc::window(samples, 1.0, 1.2);
  CHECK(d.samples == 99);
  CHECK(d.sw_cap == 0);
  CHECK(d.mean_watts() == Approx(415));
  CHECK(d.joules() == Approx(415 * 0.2));
}

TEST_CASE("the software power cap is counted apart from the other reasons, and over the second half") {
  std::vector<tc::NvmlSample> samples;
  for (int i = 0; i < 50; ++i) samples.push_back(sample(0.002 * i, 700, tc::kReasonSwPowerCap));      // first half
  for (int i = 50; i < 100; ++i) samples.push_back(sample(0.002 * i, 650, 0x40 /* HW thermal */));  // second
  const tc::Drawn d = tc::window(samples, 0.0, 0.2);
  CHECK(d.sw_cap_share() == Approx(0.5));
  CHECK(d.late_sw_cap_share() == 0.0);
  CHECK(d.other_limits_share() == Approx(0.5));
}

TEST_CASE("batches add up, and no samples or no reasons give NaN, not 0") {
  std::vector<tc::NvmlSample> samples = {sample(0.01, 700, tc::kReasonSwPowerCap)};
  tc::Drawn total = tc::window(samples, 0.0, 0.1);
  total.add(tc::window({sample(0.11, 500, 0)}, 0.1, 0.2));
  CHECK(total.samples == 2);
  CHECK(total.sw_cap_share() == Approx(0.5));
  CHECK(total.seconds == Approx(0.2));
  CHECK(std::isnan(tc::window({}, 0.0, 0.1).sw_cap_share()));
  tc::NvmlSample no_reasons = sample(0.01, 600, 0);
  no_reasons.reasons_known = false;
  const tc::Drawn d = tc::window({no_reasons}, 0.0, 0.1);
  CHECK(d.samples == 1);
  CHECK(std::isnan(d.sw_cap_share()));
}

TEST_CASE("each round's share of cuBLAS, and the spread over the rounds") {
  // The same FLOPs: 205 us of cuBLAS beside 219 us of the row is 93.6%.
  CHECK(tc::round_share({219, 218, 220}, 1.0, {205, 204, 206}, 1.0) == Approx(100.0 * 205 / 219));
  // Twice the FLOPs in the same time is 200%.
  CHECK(tc::round_share({1.0}, 2.0, {1.0}, 1.0) == Approx(200.0));
  const tc::Spread s = tc::spread({94.0, 99.5, 97.2});
  CHECK(s.low == 94.0);
  CHECK(s.high == 99.5);
  CHECK(s.width() == Approx(5.5));
  CHECK(std::isnan(tc::spread({}).low));
}
