// Catch2 v2 (Debian's 2.13) and v3 (the GPU machine's 3.4) in one include (a copy of tests/catch.hpp).
#pragma once
#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#define TUTORIAL_CATCH_V3 1
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
