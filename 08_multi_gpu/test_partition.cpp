// CPU tests of partition::even, which splits the matmul's columns over the GPUs and each GPU's
// columns into pieces: every column lands in exactly one piece of one GPU, for 1 to 8 GPUs.
#include <algorithm>
#include <vector>

#include "catch.hpp"
#include "partition.hpp"

TEST_CASE("even parts cover every item exactly once, in order", "[partition]") {
  for (size_t n : {0ul, 1ul, 2ul, 7ul, 8ul, 33ul, 777ul, 8192ul, 8193ul})
    for (int parts = 1; parts <= 8; ++parts) {
      std::vector<int> hits(n, 0);
      size_t next = 0, smallest = n, largest = 0;
      for (int p = 0; p < parts; ++p) {
        const partition::Range r = partition::even(n, parts, p);
        REQUIRE(r.first == next);  // contiguous, in order
        for (size_t i = r.first; i < r.first + r.count; ++i) ++hits.at(i);
        next = r.first + r.count;
        smallest = std::min(smallest, r.count);
        largest = std::max(largest, r.count);
      }
      REQUIRE(next == n);
      for (int h : hits) REQUIRE(h == 1);
      REQUIRE(largest - smallest <= 1);
    }
}

TEST_CASE("pieces of a GPU's part stay inside it", "[partition]") {
  const size_t n = 8192;
  for (int gpus = 2; gpus <= 8; ++gpus)
    for (int g = 0; g < gpus; ++g) {
      const partition::Range mine = partition::even(n, gpus, g);
      size_t covered = 0;
      for (int piece = 0; piece < 8; ++piece) covered += partition::even(mine.count, 8, piece).count;
      REQUIRE(covered == mine.count);
    }
}

TEST_CASE("shrinking pieces cover every item once, each at least one, smaller toward the end", "[partition]") {
  for (size_t n : {1ul, 2ul, 3ul, 7ul, 33ul, 65ul, 777ul, 4096ul, 4097ul})
    for (int parts = 1; parts <= 12 && size_t(parts) <= n; ++parts)
      for (double ratio : {1.0, 0.8, 0.5, 0.3})
        for (size_t align : {1ul, 128ul}) {
          size_t next = 0;
          std::vector<size_t> sizes;
          for (int p = 0; p < parts; ++p) {
            const partition::Range r = partition::shrinking(n, parts, p, ratio, align);
            REQUIRE(r.first == next);  // contiguous, in order
            REQUIRE(r.count >= 1);
            next = r.first + r.count;
            sizes.push_back(r.count);
          }
          REQUIRE(next == n);
          if (ratio < 1 && parts > 1 && n >= 64 * size_t(parts) * align) REQUIRE(sizes.back() < sizes.front());
          if (ratio == 1 && align == 1) {
            const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
            REQUIRE(*hi - *lo <= 1);
          }
        }
}

TEST_CASE("shrinking pieces: boundaries on multiples of align when the pieces are large", "[partition]") {
  // 4096 columns in 5 pieces, each 0.5 of the one before: 2114, 1057, 528, 264, 132 ideally.
  const size_t n = 4096, align = 128;
  for (int p = 0; p < 5; ++p) {
    const partition::Range r = partition::shrinking(n, 5, p, 0.5, align);
    REQUIRE(r.first % align == 0);
  }
  REQUIRE(partition::shrinking(n, 5, 0, 0.5, align).count == 2048 + 128);
  REQUIRE(partition::shrinking(n, 5, 4, 0.5, align).count == 128);
}
