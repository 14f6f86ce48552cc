#include <tutorial/table.hpp>
#include <tutorial/timer.cuh>
#include <tutorial/verify.hpp>

#include <cmath>
#include <vector>

#include "catch.hpp"

TEST_CASE("max_abs_error finds the largest difference") {
  const std::vector<float> got = {3.0f, 3.0f, 2.5f, 3.0f};
  const std::vector<double> want = {3.0, 3.0, 3.0, 3.0};
  CHECK(tutorial::max_abs_error(got.data(), want.data(), got.size()) == 0.5);
  CHECK(tutorial::max_abs_error_from(got.data(), 3.0, got.size()) == 0.5);
  CHECK(tutorial::max_abs_error(got.data(), want.data(), 2) == 0.0);
}

TEST_CASE("NaN never passes") {
  // A NaN after a larger error, and a NaN first: std::max would drop either one.
  const std::vector<float> got = {1.0f, NAN, 3.0f};
  const std::vector<float> want = {3.0f, 3.0f, 3.0f};
  CHECK(std::isnan(tutorial::max_abs_error(got.data(), want.data(), got.size())));
  CHECK(std::isnan(tutorial::max_abs_error_from(got.data(), 3.0, got.size())));
  CHECK(std::isnan(tutorial::relative_error(got.data(), want.data(), got.size())));

  tutorial::Verifier v;
  CHECK_FALSE(v.exact("nan", NAN));
  CHECK_FALSE(v.within("nan", NAN, 1e-3));
  CHECK(v.exit_code() == 1);
}

TEST_CASE("relative_error is the 2-norm ratio") {
  const std::vector<double> ref = {3.0, 4.0};
  const std::vector<double> got = {3.0, 4.5};
  CHECK(tutorial::relative_error(got.data(), ref.data(), 2) == Approx(0.1));
  const std::vector<double> zeros = {0.0, 0.0};
  CHECK(tutorial::relative_error(zeros.data(), zeros.data(), 2) == 0.0);
  CHECK(std::isinf(tutorial::relative_error(ref.data(), zeros.data(), 2)));
}

TEST_CASE("Verifier passes only exact zeros and errors within tolerance") {
  tutorial::Verifier v;
  CHECK(v.exact("zero", 0.0));
  CHECK(v.within("small", 1e-7, 1e-6));
  CHECK(v.exit_code() == 0);
  CHECK_FALSE(v.exact("tiny", 1e-30));
  CHECK(v.exit_code() == 1);
  CHECK(v.failures() == 1);
}

TEST_CASE("a Verifier that checked nothing does not pass") {
  tutorial::Verifier v;
  CHECK(v.exit_code() == 1);
  v.figure("speedup", 12.5);
  CHECK(v.exit_code() == 1);
}

TEST_CASE("goals are reported, never verdicts") {
  tutorial::Verifier v;
  v.exact("zero", 0.0);
  CHECK(v.goal("share of copy", 80.0, 95.0, "%") == false);
  CHECK(v.goal("no value", NAN, 95.0, "%") == false);
  CHECK(v.exit_code() == 0);
}

TEST_CASE("JSON pieces of the SUMMARY line") {
  CHECK(tutorial::json_string("a \"b\"\\\n") == "\"a \\\"b\\\"\\\\\\u000a\"");
  CHECK(tutorial::json_number(97.3) == "97.3");
  CHECK(tutorial::json_number(13403.0) == "13403");
  CHECK(tutorial::json_number(NAN) == "null");
  CHECK(tutorial::json_number(INFINITY) == "null");
}

TEST_CASE("summarize takes the median of the samples") {
  const auto odd = tutorial::summarize({5.0, 1.0, 3.0});
  CHECK(odd.median_ms == 3.0);
  CHECK(odd.min_ms == 1.0);
  CHECK(odd.max_ms == 5.0);
  CHECK(odd.runs == 3);
  CHECK(tutorial::summarize({4.0, 1.0, 2.0, 3.0}).median_ms == 2.5);
  CHECK(tutorial::gigabytes_per_second(2e9, 1000.0) == 2.0);
}

TEST_CASE("format and format_time") {
  CHECK(tutorial::format("%d-%s", 7, "x") == "7-x");
  CHECK(tutorial::format_time(88.8) == "88.8 ms");
  CHECK(tutorial::format_time(0.0076) == "7.6 us");
  CHECK(tutorial::format_time(0.0000005) == "0.5 ns");
}
