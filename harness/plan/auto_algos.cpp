#include "harness/plan/auto_algos.hpp"

#include <array>

namespace collbench {

const AlgoEntry& auto_entry(Op op) {
  static const auto entries = [] {
    std::array<AlgoEntry, std::size(kAllOps)> es{};
    for (Op o : kAllOps)
      es[static_cast<std::size_t>(o)] = {o,
                                         kAutoAlgo,
                                         "any",
                                         "the algorithm the --tuning file names for this size and node layout",
                                         "--tuning FILE",
                                         nullptr};
    return es;
  }();
  return entries[static_cast<std::size_t>(op)];
}

bool has_auto(const std::vector<Block>& plan) {
  for (const Block& b : plan) {
    if (const auto* c = std::get_if<CollectiveBlock>(&b))
      for (const AlgoEntry* e : c->algos)
        if (e == &auto_entry(c->op)) return true;
    if (const auto* d = std::get_if<DdpBlock>(&b))
      for (const AlgoEntry* e : d->algos)
        if (e == &auto_entry(Op::allreduce)) return true;
  }
  return false;
}

CollectiveBlock AutoAlgos::resolve(const CollectiveBlock& b, std::uint64_t bytes) {
  CollectiveBlock out = b;
  for (const AlgoEntry*& slot : out.algos) {
    if (slot != &auto_entry(b.op)) continue;
    TunedChoice c = tuning_.choose(b.op, backend_, device_, layout_, bytes);
    const AlgoEntry* chosen = c.algo == kAutoAlgo ? nullptr : registry_.find(b.op, c.algo, backend_);
    if (!chosen) {  // a file from another build or backend: say so, run the library
      c.match += "; '" + c.algo + "' is not available here: library";
      c.algo = "library";
      chosen = registry_.find(b.op, "library", backend_);
      if (!chosen) throw Error("--algo auto: no library entry for " + std::string(op_name(b.op)) + " on " + backend_);
    }
    const AlgoEntry* made = nullptr;
    for (const auto& [e, choice] : made_)
      if (e.op == b.op && choice.algo == c.algo && choice.origin == c.origin && choice.match == c.match) made = &e;
    if (!made) {
      AlgoEntry e = *chosen;
      e.algo = kAutoAlgo;
      made = &made_.emplace_back(std::move(e), std::move(c)).first;
    }
    slot = made;
  }
  return out;
}

const TunedChoice* AutoAlgos::choice_of(const AlgoEntry& e) const {
  for (const auto& [made, choice] : made_)
    if (&made == &e) return &choice;
  return nullptr;
}

}  // namespace collbench
