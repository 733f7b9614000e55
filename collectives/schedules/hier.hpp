#pragma once
// The pieces node-aware (hierarchical) algorithms are built from: the groups a transport
// splits into by its node layout (patterns/node_layout.hpp) and running one phase of the
// call as another registered algorithm over a group. Not an algorithm itself: it registers
// nothing, and an algorithm file built on it still touches no other file.
//
// Splits are made on the first call (collective, milliseconds) and cached by name
// ("hier/node", "hier/rail", "hier/leaders"), so the harness's warm-up pays for them.
#include <string_view>

#include "collectives/collective.hpp"
#include "collectives/patterns/node_layout.hpp"
#include "collectives/transport/transport.hpp"

namespace collbench::schedules::hier {

struct Groups {
  const patterns::NodeLayout* layout;
  Transport* node;     // the ranks of this rank's node (never null; the transport itself on one node, so
                       // the node phases share its peer memory with the flat zero-copy algorithms)
  Transport* rail;     // the ranks with this rank's local index on every node that has one (never null)
  Transport* leaders;  // one rank per node (the lowest), in node order; null unless this rank leads its node
};

// Collective over `t`: every rank must call it, whatever it then does.
Groups split(Transport& t);

// Runs `op` over `sub` with the registered algorithm `algo` (a p2p one, "any" backend). Throws
// Error if it is missing or refuses the case: a hierarchical algorithm is built from phases that
// run on any group.
void run_as(Transport& sub, Op op, std::string_view algo, const CollArgs& a);

// Whether `op` can run zero-copy on `node`: a "shm" algorithm of it accepts the case and the
// node has peer memory of the buffers' kind (collective on `node` the first time).
bool zero_copy(Transport& node, Op op, const CollArgs& a);

// One node's phase: the zero-copy "shm" algorithm of `op` where zero_copy(), else `p2p`.
// Returns the algorithm run.
std::string_view run_in_node(Transport& node, Op op, std::string_view p2p, const CollArgs& a);

}  // namespace collbench::schedules::hier
