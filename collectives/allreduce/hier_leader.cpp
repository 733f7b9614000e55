// Node-aware allreduce through one leader per node (the teaching material's "reduce within the
// node, then across nodes"): (1) reduce to each node's leader (its lowest rank); (2) allreduce
// among the leaders; (3) broadcast from the leader inside each node. Only the leaders use the
// network, each carrying the whole message: the shape for small messages, where one message
// per node beats a ring's many steps, and for any layout, uneven ones included.
// Node phases: the zero-copy "shm" reduce and broadcast when the node has peer memory, else
// the p2p binomial trees; leaders: Rabenseifner (ring volume in 2 log2(m) steps).
#include "collectives/registry.hpp"
#include "collectives/schedules/hier.hpp"

namespace collbench::allreduce_hier_leader {
namespace {

void run(Transport& t, const CollArgs& a) {
  const schedules::hier::Groups g = schedules::hier::split(t);
  CollArgs to_leader = a;  // root 0 of the node: its leader; the result in the leader's recv
  to_leader.root = 0;
  schedules::hier::run_in_node(*g.node, Op::reduce, "tree", to_leader);
  CollArgs whole = a;  // in place on recv
  whole.send = a.recv;
  whole.root = 0;
  if (g.leaders) schedules::hier::run_as(*g.leaders, Op::allreduce, "rabenseifner", whole);
  schedules::hier::run_in_node(*g.node, Op::broadcast, "tree", whole);
}

COLLBENCH_REGISTER({Op::allreduce, "hier_leader", "any",
                    "node-aware: reduce to each node's leader, allreduce among the leaders, broadcast in each node",
                    "any layout (uneven too), any count; node phases zero-copy (shm) where possible", &run},
                    {.node_aware = true, .simplicity_rank = 110});

}  // namespace
}  // namespace collbench::allreduce_hier_leader
