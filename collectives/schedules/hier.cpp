#include "collectives/schedules/hier.hpp"

#include <string>

#include "collectives/registry.hpp"

namespace collbench::schedules::hier {

Groups split(Transport& t) {
  const patterns::NodeLayout& l = t.node_layout();
  const int r = t.rank();
  const auto node = l.node_split(r), rail = l.rail_split(r), lead = l.leader_split(r);
  Groups g{&l, l.nodes() == 1 ? &t : t.split("hier/node", node.color, node.key),
           t.split("hier/rail", rail.color, rail.key), t.split("hier/leaders", lead.color, lead.key)};
  return g;
}

void run_as(Transport& sub, Op op, std::string_view algo, const CollArgs& a) {
  const AlgoEntry* e = Registry::get().find(op, algo, "any");
  if (!e) throw Error(std::string(op_name(op)) + "/" + std::string(algo) + " is not registered", sub.error_context());
  if (e->supports)
    if (auto why = e->supports(sub.size(), a))
      throw Error(std::string(op_name(op)) + "/" + std::string(algo) + " refused a phase: " + *why,
                  sub.error_context());
  e->run(sub, a);
}

bool zero_copy(Transport& node, Op op, const CollArgs& a) {
  const PeerMemory* pm = node.size() > 1 ? node.peer_memory() : nullptr;
  const AlgoEntry* e = Registry::get().find(op, "shm", "any");
  return pm && pm->kind() == node.memory().kind() && e && (!e->supports || !e->supports(node.size(), a));
}

std::string_view run_in_node(Transport& node, Op op, std::string_view p2p, const CollArgs& a) {
  const std::string_view algo = zero_copy(node, op, a) ? "shm" : p2p;
  run_as(node, op, algo, a);
  return algo;
}

}  // namespace collbench::schedules::hier
