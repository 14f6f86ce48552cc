/// \file partition.hpp
/// \brief Cutting n items into near-equal parts, for any number of GPUs, and into pieces that
/// shrink toward the end. Host-only C++: the unit test (test_partition.cpp) checks both on the CPU.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace partition {

/// Items [first, first + count).
struct Range {
  size_t first, count;
};

/// Part `which` of `parts` near-equal parts of n items: the first n % parts parts get one
/// item more, so no part is more than one item larger than another, and every item is in
/// exactly one part.
inline Range even(size_t n, int parts, int which) {
  const size_t base = n / parts, extra = n % parts;
  return {which * base + std::min<size_t>(which, extra), base + (size_t(which) < extra ? 1 : 0)};
}

/// Piece `which` of `parts` pieces of n items whose sizes shrink by `ratio` from one piece to the
/// next (ratio 1: near-equal), each boundary rounded to a multiple of `align` items where it can
/// be. Every piece keeps at least one item (n >= parts), and every item is in exactly one piece.
/// The split matmul's last piece is its only send that no GEMM hides: the smaller, the better.
inline Range shrinking(size_t n, int parts, int which, double ratio, size_t align = 1) {
  double total = 0;
  for (int p = 0; p < parts; ++p) total += std::pow(ratio, p);
  size_t first = 0, end = 0;
  double before = 0;
  for (int p = 0; p <= which; ++p) {
    first = end;
    before += std::pow(ratio, p);
    const size_t ideal = size_t(std::llround(double(n) * before / total / double(align))) * align;
    // at least one item in this piece, and at least one left for each piece after it
    end = p + 1 == parts ? n : std::min(std::max(ideal, first + 1), n - size_t(parts - 1 - p));
  }
  return {first, end - first};
}

}  // namespace partition
