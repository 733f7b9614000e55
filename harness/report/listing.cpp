#include "harness/report/listing.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "harness/plan/p2p_method.hpp"

namespace collbench {

void print_algorithm_list(std::FILE* out, const Registry& registry) {
  std::vector<const AlgoEntry*> es;
  for (const auto& e : registry.all()) es.push_back(&e);
  // Op order as in kAllOps, then custom algorithms by name, the backends' own last.
  std::stable_sort(es.begin(), es.end(), [](const AlgoEntry* a, const AlgoEntry* b) {
    if (a->op != b->op) return static_cast<int>(a->op) < static_cast<int>(b->op);
    const bool la = a->algo == "library", lb = b->algo == "library";
    if (la != lb) return lb;
    return a->algo != b->algo ? a->algo < b->algo : a->backend < b->backend;
  });
  std::fprintf(out, "%-15s %-18s %-8s %s\n", "op", "algo", "backend", "description / requirements");
  for (const auto* e : es) {
    std::fprintf(out, "%-15s %-18s %-8s %s\n", std::string(op_name(e->op)).c_str(), e->algo.c_str(), e->backend.c_str(),
                 e->description.c_str());
    if (!e->requirements.empty()) std::fprintf(out, "%-43s requires: %s\n", "", e->requirements.c_str());
  }
  // Point-to-point methods: not registry entries (no Op), measured per rank pair (--pairs).
  for (const auto& m : kP2pMethods)
    std::fprintf(out, "%-15s %-18s %-8s %s\n", "pingpong", m.name, "any", m.description);
  std::fprintf(out,
               "(%zu algorithms and %zu pingpong methods; backend 'any' runs on every backend; "
               "algo 'library' is the backend's own)\n",
               es.size(), std::size(kP2pMethods));
}

}  // namespace collbench
