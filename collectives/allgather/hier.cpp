// Node-aware allgather: (1) each node's leader (its lowest rank) gathers its node's blocks,
// straight into their places in its recv; (2) the leaders pass whole nodes' blocks around a
// ring (m-1 steps, one message per run of consecutive ranks of a node: one per node when ranks
// are placed in blocks); (3) the leader broadcasts the whole result inside its node. Each
// node's data crosses the network once per other node, carried by one rank.
// Any layout (uneven, round-robin). Node broadcast: the zero-copy "shm" one where the node has
// peer memory, else the p2p binomial tree.
#include "collectives/schedules/hier.hpp"

#include <utility>
#include <vector>

#include "collectives/registry.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::allgather_hier {
namespace {

// The node's ranks as runs [first, last] of consecutive world ranks: one message per run.
std::vector<std::pair<int, int>> runs_of(const std::vector<int>& ranks) {
  std::vector<std::pair<int, int>> out;
  for (int r : ranks) {
    if (!out.empty() && out.back().second + 1 == r)
      out.back().second = r;
    else
      out.emplace_back(r, r);
  }
  return out;
}

void run(Transport& t, const CollArgs& a) {
  if (a.count == 0) return;  // nothing to move (the flat algorithms return at once too)
  const schedules::hier::Groups g = schedules::hier::split(t);
  const patterns::NodeLayout& l = *g.layout;
  Transport& node = *g.node;
  const std::size_t block = a.bytes(a.count);
  const auto at = [&](int world) { return static_cast<std::byte*>(a.recv) + static_cast<std::size_t>(world) * block; };
  // (1) gather to the leader (node rank 0), each block straight to its place in recv.
  if (node.rank() == 0) {
    std::vector<Request> rs;
    for (int local = 1; local < node.size(); ++local)
      rs.push_back(
          node.irecv(at(l.ranks_on(l.node_of(t.rank()))[static_cast<std::size_t>(local)]), block, local, tag::data));
    node.memory().copy(at(t.rank()), a.send, block);  // a no-op in place
    node.wait_all(rs);
  } else {
    node.send(a.send, block, 0, tag::data);
  }
  // (2) ring among the leaders: at step s leader i forwards node (i - s + 1)'s blocks to i + 1.
  if (Transport* lead = g.leaders; lead && lead->size() > 1) {
    const int m = lead->size(), i = lead->rank(), next = (i + 1) % m, prev = (i + m - 1) % m;
    for (int s = 1; s < m; ++s) {
      std::vector<Request> rs;
      for (auto [first, last] : runs_of(l.ranks_on((i - s + m) % m)))
        rs.push_back(lead->irecv(at(first), static_cast<std::size_t>(last - first + 1) * block, prev, tag::allgather));
      for (auto [first, last] : runs_of(l.ranks_on((i - s + 1 + m) % m)))
        rs.push_back(lead->isend(at(first), static_cast<std::size_t>(last - first + 1) * block, next, tag::allgather));
      lead->wait_all(rs);
    }
  }
  // (3) the whole result from the leader to its node.
  CollArgs whole = a;
  whole.send = a.recv;
  whole.count = a.count * static_cast<std::size_t>(t.size());
  whole.root = 0;
  schedules::hier::run_in_node(node, Op::broadcast, "tree", whole);
}

COLLBENCH_REGISTER({Op::allgather, "hier", "any",
                    "node-aware: gather to each node's leader, ring of whole nodes among the leaders, broadcast in "
                    "each node",
                    "any layout (uneven, round-robin), any count; node broadcast zero-copy (shm) where possible",
                    &run}, {.node_aware = true, .simplicity_rank = 100});

}  // namespace
}  // namespace collbench::allgather_hier
