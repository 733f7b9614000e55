#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "collectives/patterns/node_layout.hpp"

namespace collbench::patterns {
namespace {

using Ranks = std::vector<int>;

TEST(NodeLayout, BlockedTwoByTwo) {
  const NodeLayout l({0, 0, 1, 1});
  EXPECT_EQ(l.nodes(), 2);
  EXPECT_EQ(l.ranks_on(0), (Ranks{0, 1}));
  EXPECT_EQ(l.ranks_on(1), (Ranks{2, 3}));
  EXPECT_EQ(l.leaders(), (Ranks{0, 2}));
  EXPECT_EQ(l.rail(1), (Ranks{1, 3}));
  EXPECT_EQ(l.local_rank(3), 1);
  EXPECT_FALSE(l.uneven());
}

TEST(NodeLayout, RoundRobinPlacement) {
  const NodeLayout l({0, 1, 0, 1, 0, 1});  // mpirun --map-by node
  EXPECT_EQ(l.ranks_on(0), (Ranks{0, 2, 4}));
  EXPECT_EQ(l.ranks_on(1), (Ranks{1, 3, 5}));
  EXPECT_EQ(l.leaders(), (Ranks{0, 1}));
  EXPECT_EQ(l.rail(2), (Ranks{4, 5}));
  EXPECT_EQ(l.local_rank(5), 2);
}

TEST(NodeLayout, UnevenNodesLeaveShortRails) {
  const NodeLayout l({0, 0, 0, 1});  // 3 ranks on one node, 1 on the other
  EXPECT_TRUE(l.uneven());
  EXPECT_EQ(l.max_local_size(), 3);
  EXPECT_EQ(l.local_size(1), 1);
  EXPECT_EQ(l.rail(0), (Ranks{0, 3}));
  EXPECT_EQ(l.rail(1), (Ranks{1}));
  EXPECT_EQ(l.rail(2), (Ranks{2}));
  EXPECT_EQ(l.rail(3), Ranks{});
}

TEST(NodeLayout, NodesAreNumberedByTheirLowestRankWhateverTheLabels) {
  const NodeLayout l({7, 7, 3, 3, 7});
  EXPECT_EQ(l.node_of(0), 0);
  EXPECT_EQ(l.node_of(2), 1);
  EXPECT_EQ(l.node_of(4), 0);
  EXPECT_EQ(l.ranks_on(0), (Ranks{0, 1, 4}));
  EXPECT_THROW(NodeLayout({}), std::invalid_argument);
}

// Every layout of up to 7 ranks on up to 3 nodes: the groups partition the world, and the split
// colours and keys give exactly those groups in that order.
TEST(NodeLayout, GroupsAndSplitsAgreeForEveryPlacement) {
  for (int n = 1; n <= 7; ++n) {
    std::vector<int> labels(static_cast<std::size_t>(n), 0);
    for (bool more = true; more;) {
      const NodeLayout l(labels);
      std::map<int, std::map<int, int>> by_node, by_rail, by_leader;  // colour -> key -> rank
      std::multiset<int> in_nodes, in_rails;
      for (int r = 0; r < n; ++r) {
        const auto s = l.node_split(r), t = l.rail_split(r), u = l.leader_split(r);
        EXPECT_TRUE(by_node[s.color].emplace(s.key, r).second);
        EXPECT_TRUE(by_rail[t.color].emplace(t.key, r).second);
        if (u.color >= 0) {
          EXPECT_TRUE(by_leader[u.color].emplace(u.key, r).second);
        }
        EXPECT_EQ(l.is_leader(r), l.leader(l.node_of(r)) == r);
      }
      auto members = [](const std::map<int, int>& m) {
        Ranks out;
        for (const auto& [key, rank] : m) out.push_back(rank);
        return out;
      };
      ASSERT_EQ(static_cast<int>(by_node.size()), l.nodes());
      for (int node = 0; node < l.nodes(); ++node) {
        EXPECT_EQ(members(by_node[node]), l.ranks_on(node));
        for (int r : l.ranks_on(node)) in_nodes.insert(r);
      }
      ASSERT_EQ(static_cast<int>(by_rail.size()), l.max_local_size());
      for (int local = 0; local < l.max_local_size(); ++local) {
        EXPECT_EQ(members(by_rail[local]), l.rail(local));
        for (int r : l.rail(local)) in_rails.insert(r);
      }
      EXPECT_EQ(members(by_leader[0]), l.leaders());
      EXPECT_EQ(static_cast<int>(l.leaders().size()), l.nodes());
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(in_nodes.count(r), 1u);
        EXPECT_EQ(in_rails.count(r), 1u);
      }
      // next labelling (base 3 counter)
      more = false;
      for (auto& x : labels) {
        if (++x < 3) {
          more = true;
          break;
        }
        x = 0;
      }
    }
  }
}

}  // namespace
}  // namespace collbench::patterns
