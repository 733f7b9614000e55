#include <gtest/gtest.h>

#include <vector>

#include "collectives/patterns/binomial.hpp"

namespace collbench::patterns::binomial {
namespace {

TEST(Binomial, CeilLog2) {
  EXPECT_EQ(ceil_log2(1), 0);
  EXPECT_EQ(ceil_log2(2), 1);
  EXPECT_EQ(ceil_log2(3), 2);
  EXPECT_EQ(ceil_log2(4), 2);
  EXPECT_EQ(ceil_log2(5), 3);
  EXPECT_EQ(ceil_log2(64), 6);
  EXPECT_EQ(ceil_log2(65), 7);
}

TEST(Binomial, KnownShapes) {
  // n = 5: 0 -> {1, 2, 4}, 2 -> {3}; 4's subtree is clipped to itself.
  const Children r = children(0, 5);
  EXPECT_EQ(std::vector<int>(r.begin(), r.end()), (std::vector<int>{1, 2, 4}));
  const Children two = children(2, 5);
  EXPECT_EQ(std::vector<int>(two.begin(), two.end()), (std::vector<int>{3}));
  EXPECT_EQ(children(4, 5).count, 0);
  EXPECT_EQ(subtree_size(4, 5), 1);
  EXPECT_EQ(subtree_size(2, 5), 2);
  // Root 3 of 5: virtual 2's subtree {2, 3} is real {0, 1} (wrapped entirely);
  // virtual 1's subtree {1} is real 4.
  EXPECT_EQ(subtree_ranks(2, 3, 5).first, 0);
  EXPECT_EQ(subtree_ranks(1, 3, 5).first, 4);
  // Root 6 of 8: virtual 2's subtree {2, 3} is real {0, 1}, virtual 4's {4..7} is real
  // {2..5}; virtual 1 is real 7.
  const RankSpan four = subtree_ranks(4, 6, 8);
  EXPECT_EQ(four.first, 2);
  EXPECT_EQ(four.head, 4);
  EXPECT_FALSE(four.wraps());
  // Root 7 of 8: virtual 0's subtree is real 7, then wraps to 0..6.
  const RankSpan s = subtree_ranks(0, 7, 8);
  EXPECT_EQ(s.first, 7);
  EXPECT_EQ(s.head, 1);
  EXPECT_EQ(s.tail, 7);
  EXPECT_TRUE(s.wraps());
}

// Every rank reached exactly once from the root, parent/child agree, children subtrees tile
// their parent's range, rounds respect the schedule, depth is ceil(log2 n).
TEST(Binomial, TreeStructureForEveryWorldSizeAndRoot) {
  for (int n = 1; n <= 64; ++n) {
    int max_round = 0, max_height = 0, total_children = 0;
    std::vector<int> reached(n, 0);
    reached[0] = 1;
    for (int v = 0; v < n; ++v) {
      EXPECT_EQ(parent(v) < 0, v == 0) << n << " " << v;
      const Children cs = children(v, n);
      EXPECT_LE(cs.count, ceil_log2(n));
      total_children += cs.count;
      // Children tile [v + 1, v + subtree_size), in ascending order.
      int next = v + 1;
      std::vector<int> rounds;
      for (int c : cs) {
        EXPECT_EQ(parent(c), v) << n << " " << v << " " << c;
        EXPECT_EQ(c, next) << n << " " << v;
        next = c + subtree_size(c, n);
        ++reached[c];
        // A child receives after its parent, and a parent sends one child per round.
        EXPECT_GT(receive_round(c, n), receive_round(v, n));
        for (int r : rounds) EXPECT_NE(r, receive_round(c, n));
        rounds.push_back(receive_round(c, n));
      }
      EXPECT_EQ(next, v + subtree_size(v, n)) << n << " " << v;
      EXPECT_GE(subtree_size(v, n), 1);
      // The parent's range holds the child's.
      if (v) {
        const int p = parent(v);
        EXPECT_GE(v, p + 1);
        EXPECT_LE(v + subtree_size(v, n), p + subtree_size(p, n));
      }
      max_round = std::max(max_round, receive_round(v, n));
      max_height = std::max(max_height, std::popcount(static_cast<unsigned>(v)));
    }
    EXPECT_EQ(subtree_size(0, n), n);
    EXPECT_EQ(total_children, n - 1);  // a tree: n - 1 edges
    for (int v = 0; v < n; ++v) EXPECT_EQ(reached[v], 1) << n << " " << v;
    EXPECT_EQ(max_round, ceil_log2(n)) << n;  // the broadcast finishes in ceil(log2 n) rounds
    EXPECT_LE(max_height, ceil_log2(n)) << n;

    for (int root = 0; root < n; ++root) {
      std::vector<int> seen(n, 0);
      for (int r = 0; r < n; ++r) {
        const int v = vrank(r, root, n);
        EXPECT_EQ(rank_of(v, root, n), r);
        ++seen[v];
      }
      for (int v = 0; v < n; ++v) EXPECT_EQ(seen[v], 1);
      EXPECT_EQ(vrank(root, root, n), 0);
      // Real-rank spans: head + tail = size, the head does not run past n-1, blocks are in
      // virtual order and the spans of the root's children plus the root partition the ranks.
      std::vector<int> owner(n, 0);
      owner[root]++;
      for (int c : children(0, n)) {
        const RankSpan s = subtree_ranks(c, root, n);
        EXPECT_EQ(s.head + s.tail, subtree_size(c, n));
        EXPECT_LE(s.first + s.head, n);
        EXPECT_GE(s.head, 1);
        for (int i = 0; i < s.head; ++i) {
          EXPECT_EQ(s.first + i, rank_of(c + i, root, n));
          owner[s.first + i]++;
        }
        for (int i = 0; i < s.tail; ++i) {
          EXPECT_EQ(i, rank_of(c + s.head + i, root, n));
          owner[i]++;
        }
      }
      for (int r = 0; r < n; ++r) EXPECT_EQ(owner[r], 1) << n << " root " << root << " rank " << r;
      for (int v = 0; v < n; ++v) {
        const RankSpan s = subtree_ranks(v, root, n);
        EXPECT_EQ(s.wraps(), rank_of(v, root, n) + subtree_size(v, n) > n);
      }
    }
  }
}

}  // namespace
}  // namespace collbench::patterns::binomial
