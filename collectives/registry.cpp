#include "collectives/registry.hpp"

#include <algorithm>

namespace collbench {

std::optional<Op> parse_op(std::string_view name) {
  for (Op op : kAllOps)
    if (name == op_name(op)) return op;
  return std::nullopt;
}

Registry& Registry::mutable_instance() {
  static Registry r;  // function-local: safe against static-initialisation order
  return r;
}

const Registry& Registry::get() { return mutable_instance(); }

void Registry::add(AlgoEntry e) {
  const AlgoTraits t = default_traits(e);
  add(std::move(e), t);
}

void Registry::add(AlgoEntry e, AlgoTraits traits) {
  e.traits = traits;
  mutable_instance().entries_.push_back(std::move(e));
}

// Traits of an entry registered without them. collbench's own algorithms state theirs where they
// register; an "any" entry that does not is neutral (node-blind, messages only, unranked). A
// library entry that does not is ranked by what the registry knows of it:
//   "library"      0: the library's own choice, the simplest of all (the safest guess);
//   on_request     unranked: one of the library's algorithms forced ("library:ALGO"), after
//                  every collbench algorithm, by name;
//   anything else  10, next to the library: its own call served another way.
// Backends state the rest where they register (Open MPI's coll/han: node-aware, 10).
AlgoTraits Registry::default_traits(const AlgoEntry& e) {
  AlgoTraits t;
  if (!e.library()) return t;
  if (e.algo == "library") t.simplicity_rank = 0;
  else if (!e.on_request) t.simplicity_rank = 10;
  return t;
}

void Registry::add_elsewhere(std::string algo, std::string backend, std::string reason) {
  mutable_instance().elsewhere_.push_back({std::move(algo), std::move(backend), std::move(reason)});
}

std::optional<std::string> Registry::elsewhere(std::string_view algo, std::string_view backend) const {
  for (const Elsewhere& e : elsewhere_)
    if (e.algo == algo && e.backend == backend) return e.reason;
  return std::nullopt;
}

const AlgoEntry* Registry::find(Op op, std::string_view algo, std::string_view backend) const {
  for (const auto& e : entries_)
    if (e.op == op && e.algo == algo && (e.backend == "any" || e.backend == backend)) return &e;
  return nullptr;
}

std::vector<const AlgoEntry*> Registry::for_op(Op op, std::string_view backend) const {
  std::vector<const AlgoEntry*> out;
  for (const auto& e : entries_)
    if (e.op == op && (e.backend == "any" || e.backend == backend)) out.push_back(&e);
  // custom (0) < library (1) < library variants (2), each group by name
  const auto group = [](const AlgoEntry* e) { return e->on_request ? 2 : e->algo == "library" ? 1 : 0; };
  std::sort(out.begin(), out.end(), [&](const AlgoEntry* a, const AlgoEntry* b) {
    return group(a) != group(b) ? group(a) < group(b) : a->algo < b->algo;
  });
  return out;
}

}  // namespace collbench
