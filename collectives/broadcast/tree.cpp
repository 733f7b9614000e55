// Binomial-tree broadcast: ceil(log2 n) rounds instead of the naive n-1 sends from the root.
// Large messages go in segments: a rank forwards segment k to its children while segment
// k+1 is already arriving from its parent, so the tree's depth costs one segment time per
// level instead of one whole-message time. Every non-root receives each segment once;
// each rank sends it once per child.
#include <array>
#include <span>

#include "collectives/patterns/binomial.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/pipeline.hpp"

namespace collbench::broadcast_tree {
namespace {

namespace bt = patterns::binomial;

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const bool root = me == a.root;
  const int v = bt::vrank(me, a.root, n);
  const bt::Children kids = bt::children(v, n);
  const int parent = root ? -1 : bt::rank_of(bt::parent(v), a.root, n);
  // Farthest child first: its subtree has the most rounds still to go.
  std::array<int, bt::kMaxChildren> order{};
  for (int i = 0; i < kids.count; ++i) order[i] = bt::rank_of(kids.vranks[kids.count - 1 - i], a.root, n);
  schedules::pipeline::broadcast(t, a, parent, std::span<const int>(order.data(), kids.count));
}

COLLBENCH_REGISTER({Op::broadcast, "tree", "any",
                    "binomial tree, ceil(log2 n) rounds; segments pipelined down the tree (default 256 KiB)",
                    "any world size, any root, any count", &run}, {.simplicity_rank = 40});

}  // namespace
}  // namespace collbench::broadcast_tree
