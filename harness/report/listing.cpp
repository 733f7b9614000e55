#include "harness/report/listing.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "harness/plan/p2p_method.hpp"

namespace collbench {
namespace {

// Op order as in kAllOps, then custom algorithms by name, the backends' own last.
std::vector<const AlgoEntry*> listed(const Registry& registry) {
  std::vector<const AlgoEntry*> es;
  for (const auto& e : registry.all()) es.push_back(&e);
  std::stable_sort(es.begin(), es.end(), [](const AlgoEntry* a, const AlgoEntry* b) {
    if (a->op != b->op) return static_cast<int>(a->op) < static_cast<int>(b->op);
    const bool la = a->algo == "library", lb = b->algo == "library";
    if (la != lb) return lb;
    return a->algo != b->algo ? a->algo < b->algo : a->backend < b->backend;
  });
  return es;
}

}  // namespace

void print_algorithm_list(std::FILE* out, const Registry& registry) {
  const std::vector<const AlgoEntry*> es = listed(registry);
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

nlohmann::ordered_json algorithm_json(const AlgoEntry& e, bool with_text) {
  nlohmann::ordered_json j = {{"op", std::string(op_name(e.op))}, {"algo", e.algo}, {"backend", e.backend}};
  if (with_text) {
    j["description"] = e.description;
    j["requirements"] = e.requirements;
  }
  j["traits"] = {{"node_aware", e.traits.node_aware},
                 {"peer_memory", e.traits.peer_memory},
                 {"library", e.library()},
                 {"simplicity_rank", e.traits.simplicity_rank}};
  return j;
}

nlohmann::ordered_json algorithms_json(const std::vector<const AlgoEntry*>& entries, bool with_text) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const AlgoEntry* e : entries) out.push_back(algorithm_json(*e, with_text));
  return out;
}

std::string algorithm_list_json(const Registry& registry) {
  nlohmann::ordered_json methods = nlohmann::ordered_json::array();
  for (const auto& m : kP2pMethods) methods.push_back({{"algo", m.name}, {"description", m.description}});
  const nlohmann::ordered_json j = {{"algorithms", algorithms_json(listed(registry), true)}, {"pingpong", methods}};
  return j.dump(2) + "\n";
}

}  // namespace collbench
