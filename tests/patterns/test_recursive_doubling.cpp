#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "collectives/patterns/chunks.hpp"
#include "collectives/patterns/recursive_doubling.hpp"

namespace collbench::patterns {
namespace {

TEST(RecursiveDoubling, PowerOfTwoFloor) {
  EXPECT_EQ(pof2_floor(1), 1);
  EXPECT_EQ(pof2_floor(2), 2);
  EXPECT_EQ(pof2_floor(3), 2);
  EXPECT_EQ(pof2_floor(63), 32);
  EXPECT_EQ(pof2_floor(64), 64);
  EXPECT_EQ(log2_exact(1), 0);
  EXPECT_EQ(log2_exact(64), 6);
}

TEST(RecursiveDoubling, EveryRankIsActiveOrFoldedExactlyOnce) {
  for (int n = 1; n <= 64; ++n) {
    const Fold f(n);
    EXPECT_EQ(f.pof2 + f.rem, n);
    EXPECT_LT(f.rem, f.pof2);
    std::vector<int> newrank_used(f.pof2, 0);
    int folded = 0;
    for (int r = 0; r < n; ++r) {
      if (f.folded(r)) {
        ++folded;
        EXPECT_EQ(f.newrank(r), -1);
        const int p = f.fold_partner(r);
        EXPECT_TRUE(f.absorbs(p)) << n << " " << r;  // folded into an active rank
        EXPECT_EQ(f.fold_partner(p), r);
        continue;
      }
      const int j = f.newrank(r);
      ASSERT_GE(j, 0);
      ASSERT_LT(j, f.pof2);
      ++newrank_used[j];
      EXPECT_EQ(f.rank_of(j), r);
      EXPECT_EQ(f.absorbs(r), f.fold_partner(r) >= 0);
    }
    EXPECT_EQ(folded, f.rem) << n;
    for (int j = 0; j < f.pof2; ++j) EXPECT_EQ(newrank_used[j], 1) << n << " " << j;
    // The carried real ranks of newranks 0..pof2-1 tile 0..n-1 in order.
    EXPECT_EQ(f.first_carried(0), 0);
    EXPECT_EQ(f.first_carried(f.pof2), n);
    for (int j = 0; j < f.pof2; ++j) {
      const int first = f.first_carried(j), last = f.first_carried(j + 1);
      EXPECT_EQ(last - first, j < f.rem ? 2 : 1);
      for (int r = first; r < last; ++r) EXPECT_EQ(f.newrank(r) == -1 ? f.newrank(f.fold_partner(r)) : f.newrank(r), j);
    }
  }
}

TEST(RecursiveDoubling, PartnersAreSymmetricAndActive) {
  for (int n = 1; n <= 64; ++n) {
    const Fold f(n);
    for (int r = 0; r < n; ++r) {
      if (f.folded(r)) continue;
      for (int s = 0; s < f.steps(); ++s) {
        for (int mask : {halving_mask(s), unhalving_mask(s, f.pof2), doubling_mask(s)}) {
          const int p = f.partner(r, mask);
          ASSERT_GE(p, 0);
          ASSERT_LT(p, n);
          EXPECT_NE(p, r);
          EXPECT_FALSE(f.folded(p)) << n << " " << r << " " << s;
          EXPECT_EQ(f.partner(p, mask), r);
        }
      }
    }
  }
}

TEST(RecursiveDoubling, HalvingPartitionsAndEndsWithOneBlockEach) {
  for (int n = 1; n <= 64; ++n) {
    const Fold f(n);
    const int P = f.pof2;
    std::vector<int> owner(P, -1);
    for (int j = 0; j < P; ++j) {
      EXPECT_EQ(halving_held(j, 0, P), (BlockRange{0, P}));
      for (int s = 0; s < f.steps(); ++s) {
        const BlockRange held = halving_held(j, s, P), keep = halving_keep(j, s, P), send = halving_send(j, s, P);
        // Keep and send are the two halves of what is held...
        EXPECT_EQ(keep.size(), held.size() / 2);
        EXPECT_EQ(send.size(), held.size() / 2);
        EXPECT_EQ(std::min(keep.first, send.first), held.first);
        EXPECT_EQ(std::max(keep.last, send.last), held.last);
        EXPECT_TRUE(keep.last == send.first || send.last == keep.first);
        // ...and the partner keeps exactly what this rank sends, and vice versa.
        const int q = j ^ halving_mask(s);
        EXPECT_EQ(halving_held(q, s, P), held);
        EXPECT_EQ(halving_keep(q, s, P), send);
        EXPECT_EQ(halving_send(q, s, P), keep);
      }
      const BlockRange last = halving_held(j, f.steps(), P);
      EXPECT_EQ(last.size(), 1);
      EXPECT_EQ(last.first, halving_owned_block(j, P));
      EXPECT_EQ(owner[last.first], -1) << "block owned twice";
      owner[last.first] = j;
    }
    for (int b = 0; b < P; ++b) EXPECT_GE(owner[b], 0) << n << " block " << b;
  }
}

TEST(RecursiveDoubling, UnhalvingReversesHalving) {
  for (int n = 1; n <= 64; ++n) {
    const Fold f(n);
    const int P = f.pof2, S = f.steps();
    for (int j = 0; j < P; ++j) {
      BlockRange held = {halving_owned_block(j, P), halving_owned_block(j, P) + 1};
      for (int s = 0; s < S; ++s) {
        const int q = j ^ unhalving_mask(s, P);
        const BlockRange send = unhalving_send(j, s, P), recv = unhalving_recv(j, s, P);
        EXPECT_EQ(send, held);                     // sends what it holds
        EXPECT_EQ(unhalving_send(q, s, P), recv);  // receives what the partner sends
        EXPECT_EQ(unhalving_recv(q, s, P), send);
        held = {std::min(send.first, recv.first), std::max(send.last, recv.last)};
        EXPECT_EQ(held.size(), send.size() + recv.size());  // adjacent: the union is contiguous
        EXPECT_EQ(held, halving_held(j, S - 1 - s, P));     // the state before the mirrored halving step
      }
      EXPECT_EQ(held, (BlockRange{0, P}));
    }
  }
}

TEST(RecursiveDoubling, NaturalOrderDoublingGrowsToEveryone) {
  for (int n = 1; n <= 64; ++n) {
    const Fold f(n);
    for (int j = 0; j < f.pof2; ++j) {
      EXPECT_EQ(doubling_group(j, 0), (BlockRange{j, j + 1}));
      for (int s = 0; s < f.steps(); ++s) {
        const BlockRange mine = doubling_group(j, s), theirs = doubling_group(j ^ doubling_mask(s), s);
        EXPECT_TRUE(mine.last == theirs.first || theirs.last == mine.first);
        const BlockRange both{std::min(mine.first, theirs.first), std::max(mine.last, theirs.last)};
        EXPECT_EQ(doubling_group(j, s + 1), both);
      }
      EXPECT_EQ(doubling_group(j, f.steps()), (BlockRange{0, f.pof2}));
    }
  }
}

// Uneven element split of the pof2 blocks: the halving ranges still tile the elements.
TEST(RecursiveDoubling, HalvingElementRangesPartitionUnevenCounts) {
  for (int n = 1; n <= 64; ++n) {
    const Fold f(n);
    for (std::size_t count : {0ul, 1ul, static_cast<std::size_t>(f.pof2 - 1), 1001ul}) {
      for (int j = 0; j < f.pof2; ++j) {
        for (int s = 0; s < f.steps(); ++s) {
          const BlockRange k = halving_keep(j, s, f.pof2), d = halving_send(j, s, f.pof2),
                           h = halving_held(j, s, f.pof2);
          const Range ke = chunk_span(count, f.pof2, k.first, k.last), de = chunk_span(count, f.pof2, d.first, d.last),
                      he = chunk_span(count, f.pof2, h.first, h.last);
          EXPECT_EQ(ke.count + de.count, he.count);
          EXPECT_EQ(std::min(ke.offset, de.offset), he.offset);
        }
      }
    }
  }
}

}  // namespace
}  // namespace collbench::patterns
