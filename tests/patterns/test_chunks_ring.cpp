#include <gtest/gtest.h>

#include <vector>

#include "collectives/patterns/chunks.hpp"
#include "collectives/patterns/ring.hpp"

namespace collbench::patterns {
namespace {

TEST(Chunks, PartitionExactlyForEveryWorldSize) {
  for (int n = 1; n <= 64; ++n) {
    for (std::size_t count : {0ul, 1ul, static_cast<std::size_t>(n - 1), static_cast<std::size_t>(n), 1000ul, 1001ul}) {
      std::size_t next = 0, minc = count, maxc = 0;
      for (int i = 0; i < n; ++i) {
        const Range r = chunk(count, n, i);
        EXPECT_EQ(r.offset, next) << n << " " << count << " " << i;
        next = r.end();
        minc = std::min(minc, r.count);
        maxc = std::max(maxc, r.count);
      }
      EXPECT_EQ(next, count);
      EXPECT_LE(maxc - std::min(minc, maxc), 1u);
      EXPECT_EQ(chunk_span(count, n, 0, n), (Range{0, count}));
    }
  }
}

TEST(Chunks, SegmentsCoverCount) {
  EXPECT_EQ(num_segments(0, 8), 1u);
  EXPECT_EQ(num_segments(16, 8), 2u);
  EXPECT_EQ(num_segments(17, 8), 3u);
  EXPECT_EQ(num_segments(17, 0), 1u);
}

TEST(Ring, NeighboursAndChunkScheduleForEveryWorldSize) {
  for (int n = 1; n <= 64; ++n) {
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(ring_prev(ring_next(r, n), n), r);
      // What r sends at step s is what its successor receives at step s.
      for (int s = 0; s + 1 < n; ++s) {
        EXPECT_EQ(rs_send_chunk(r, s, n), rs_recv_chunk(ring_next(r, n), s, n));
        EXPECT_EQ(ag_send_chunk(r, s, n), ag_recv_chunk(ring_next(r, n), s, n));
      }
      // The last chunk received in the reduce-scatter is the owned one.
      if (n > 1) {
        EXPECT_EQ(rs_recv_chunk(r, n - 2, n), rs_owned_chunk(r, n));
      }
      // The allgather delivers every chunk except the owned one exactly once.
      std::vector<int> seen(n, 0);
      seen[rs_owned_chunk(r, n)]++;
      for (int s = 0; s + 1 < n; ++s) seen[ag_recv_chunk(r, s, n)]++;
      for (int c = 0; c < n; ++c) EXPECT_EQ(seen[c], 1) << n << " " << r << " " << c;
      for (int root = 0; root < n; ++root) EXPECT_EQ(ring_rank_at(ring_position(r, root, n), root, n), r);
    }
  }
}

}  // namespace
}  // namespace collbench::patterns
