/// \file partition.hpp
/// \brief Cutting n items into near-equal parts, for any number of GPUs. Host-only C++: the
/// unit test (test_partition.cpp) checks it on the CPU for 1 to 8 parts.
#pragma once

#include <algorithm>
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

}  // namespace partition
