#include "harness/report/listing.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "collectives/backends/backend.hpp"
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

// Why `b` cannot run here on its first device ("" when it can).
std::string unavailable_here(const BackendInfo& b) { return b.unavailable ? b.unavailable(b.devices.front()) : ""; }

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
  for (const BackendInfo& b : Backends::get().all()) {
    std::string devices;
    for (const auto& d : b.devices) devices += (devices.empty() ? "" : ", ") + d;
    std::fprintf(out, "(backend %s: %s; ranks: %s bootstrap; devices: %s%s)\n", b.name.c_str(), b.summary.c_str(),
                 b.bootstrap.c_str(), devices.c_str(), unavailable_here(b).empty() ? "" : "; not available here");
  }
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
  nlohmann::ordered_json backends = nlohmann::ordered_json::array();
  for (const BackendInfo& b : Backends::get().all()) {
    const std::string why = unavailable_here(b);
    backends.push_back({{"name", b.name},
                        {"summary", b.summary},
                        {"bootstrap", b.bootstrap},
                        {"devices", b.devices},
                        {"version_keys", b.version_keys},
                        {"ranks_share_process", b.ranks_share_process},
                        {"unavailable", why.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(why)}});
  }
  const nlohmann::ordered_json j = {
      {"algorithms", algorithms_json(listed(registry), true)}, {"pingpong", methods}, {"backends", backends}};
  return j.dump(2) + "\n";
}

}  // namespace collbench
