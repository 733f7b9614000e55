// Node-aware ring allreduce, as NCCL's multi-node rings: (1) reduce-scatter inside each node,
// so local rank i holds slice i of its node's sum; (2) allreduce of slice i among the ranks
// with local index i on every node (the "rail"): all of a node's ranks use the network at once,
// each carrying 1/k of the data (k ranks per node); (3) allgather inside each node. Across
// nodes each rank sends 2(m-1)/m of its slice (m nodes): 2(m-1)/(mk) of the data, against
// 2(n-1)/n for the flat ring, whose every step may cross a node boundary.
// Node phases: the zero-copy "shm" reduce-scatter (and allgather, for slices up to one staging
// round) when the node has peer memory and the slices are equal (count divisible by k), else
// the p2p rings. On one node (rails of
// one rank) that is a zero-copy ring-volume allreduce.
// Needs the same number of ranks on every node (the slices must line up across nodes):
// uneven layouts are refused; hier_leader runs on any layout.
#include "collectives/patterns/ring.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/hier.hpp"
#include "collectives/schedules/peer.hpp"
#include "collectives/schedules/ring.hpp"

namespace collbench::allreduce_hier_ring {
namespace {

void run(Transport& t, const CollArgs& a) {
  if (t.node_layout().uneven())
    throw NotSupported("hier_ring: needs the same number of ranks on every node (use hier_leader)");
  const schedules::hier::Groups g = schedules::hier::split(t);
  Transport& node = *g.node;
  const int k = node.size(), local = node.rank();
  // Equal slices (count divisible by k): slice i is block i, as the allgather op lays blocks
  // out, so the node's allgather can be the zero-copy one. Else slices differing by one
  // element, owned as the ring reduce-scatter leaves them.
  const bool blocks = a.count % static_cast<std::size_t>(k) == 0;
  const schedules::ring::ChunkMap map = blocks
                                            ? schedules::ring::ChunkMap{k, a.count / static_cast<std::size_t>(k), true}
                                            : schedules::ring::ChunkMap{k, a.count, false};
  const patterns::Range own = map(patterns::rs_owned_chunk(local, k));
  void* mine = elem_ptr(a.recv, own.offset, a.dtype);
  CollArgs rs = a;  // block `local` of the node's sum into its place in recv
  rs.recv = mine;
  rs.count = own.count;
  if (k == 1) {
    node.memory().copy(a.recv, a.send, a.bytes(a.count));  // a no-op in place
  } else if (blocks && schedules::hier::zero_copy(node, Op::reduce_scatter, rs)) {
    schedules::hier::run_as(node, Op::reduce_scatter, "shm", rs);
  } else {
    // Partials in recv, which the allgather overwrites: no scratch beyond the receive segments.
    schedules::ring::reduce_scatter(node, a, map, a.send, mine, a.recv);
  }
  CollArgs slice = a;  // across nodes, in place
  slice.send = slice.recv = mine;
  slice.count = own.count;
  schedules::hier::run_as(*g.rail, Op::allreduce, "ring", slice);
  // Past one staging round (kStageBytes) the p2p ring, which copies nothing extra: chosen when the
  // shm allgather staged a whole block in peer memory (harness.memory: peak <= 3x the largest
  // buffer; with the stage, 3.1x alone and 3.7x after the other algorithms). It stages in rounds
  // now (allgather/shm.cpp); whether shm beats the ring here beyond one round is not measured.
  if (!blocks || a.bytes(own.count) > schedules::peer::kStageBytes)
    return schedules::ring::allgather(node, a, map, a.recv);
  CollArgs ag = a;  // in place: send == recv + local·block
  ag.send = mine;
  ag.count = own.count;
  schedules::hier::run_in_node(node, Op::allgather, "ring", ag);
}

COLLBENCH_REGISTER({Op::allreduce, "hier_ring", "any",
                    "node-aware: reduce-scatter in each node, allreduce of each slice across nodes among the ranks "
                    "with the same local index, allgather in each node (NCCL's multi-node rings)",
                    "the same number of ranks on every node, any count; node phases zero-copy (shm) where possible",
                    &run}, {.node_aware = true, .simplicity_rank = 120});

}  // namespace
}  // namespace collbench::allreduce_hier_ring
