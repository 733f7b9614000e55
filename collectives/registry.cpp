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

void Registry::add(AlgoEntry e) { mutable_instance().entries_.push_back(std::move(e)); }

const AlgoEntry* Registry::find(Op op, std::string_view algo, std::string_view backend) const {
  for (const auto& e : entries_)
    if (e.op == op && e.algo == algo && (e.backend == "any" || e.backend == backend)) return &e;
  return nullptr;
}

std::vector<const AlgoEntry*> Registry::for_op(Op op, std::string_view backend) const {
  std::vector<const AlgoEntry*> out;
  for (const auto& e : entries_)
    if (e.op == op && (e.backend == "any" || e.backend == backend)) out.push_back(&e);
  std::sort(out.begin(), out.end(), [](const AlgoEntry* a, const AlgoEntry* b) {
    const bool la = a->algo == "library", lb = b->algo == "library";
    return la != lb ? lb : a->algo < b->algo;  // library last
  });
  return out;
}

}  // namespace collbench
