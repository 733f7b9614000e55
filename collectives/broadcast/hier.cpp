// Node-aware broadcast: the message crosses the network once per node, among one rank per
// node, then spreads inside each node. When the root leads its node (its lowest rank): leaders
// first, then every node at once. Otherwise the root's node goes first (which reaches its
// leader), then the leaders, then the other nodes. Node phases: the zero-copy "shm" broadcast
// where the node has peer memory, else the p2p binomial tree; leaders: the binomial tree, or
// the pipelined chain for messages past one segment on more than two nodes.
#include "collectives/schedules/hier.hpp"

#include "collectives/registry.hpp"
#include "collectives/schedules/defaults.hpp"

namespace collbench::broadcast_hier {
namespace {

void run(Transport& t, const CollArgs& a) {
  const schedules::hier::Groups g = schedules::hier::split(t);
  const patterns::NodeLayout& l = *g.layout;
  const int me = t.rank(), root_node = l.node_of(a.root);
  const bool root_leads = l.is_leader(a.root), on_root_node = l.node_of(me) == root_node;
  if (!root_leads && on_root_node) {
    CollArgs first = a;
    first.root = l.local_rank(a.root);
    schedules::hier::run_in_node(*g.node, Op::broadcast, "tree", first);
  }
  if (g.leaders) {
    CollArgs across = a;  // the root-node leader's data: the root's send, or what reached its recv
    if (me != a.root) across.send = a.recv;
    across.root = root_node;  // leaders are in node order
    // Past one pipeline segment and two nodes, the chain: every inter-node link carries the
    // message once, where the tree's root sends it once per child (on 3x2 over a 1 Gbit/s
    // emulated link, 16 MiB took the tree 295 ms, the flat chain 151 ms).
    const bool chain = g.leaders->size() > 2 && a.count > schedules::segment_elems(a, schedules::kPipelineSegmentBytes);
    schedules::hier::run_as(*g.leaders, Op::broadcast, chain ? "ring" : "tree", across);
  }
  if (root_leads || !on_root_node) {
    CollArgs inside = a;
    if (me != a.root) inside.send = a.recv;
    inside.root = 0;
    schedules::hier::run_in_node(*g.node, Op::broadcast, "tree", inside);
  }
}

COLLBENCH_REGISTER({Op::broadcast, "hier", "any",
                    "node-aware: across nodes among one rank per node (binomial tree; large messages a chain), then inside each node",
                    "any layout (uneven too), any root, any count; node phases zero-copy (shm) where possible", &run},
                    {.node_aware = true, .simplicity_rank = 100});

}  // namespace
}  // namespace collbench::broadcast_hier
