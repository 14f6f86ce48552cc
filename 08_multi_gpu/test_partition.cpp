// CPU tests of partition::even, which splits the matmul's columns over the GPUs and each GPU's
// columns into pieces: every column lands in exactly one piece of one GPU, for 1 to 8 GPUs.
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
