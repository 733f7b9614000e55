#include "harness/report/listing.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "collectives/backends/backend.hpp"
#include "harness/plan/help_text.hpp"
#include "harness/plan/p2p_method.hpp"

namespace collbench {
namespace {

// Op order as in kAllOps; within an op each backend's library entries, backend by backend: its
// own first ("library"), then its forced variants ("library:ALGO"), then its other entries (han),
// by name; then collbench's algorithms (backend "any") by name.
std::vector<const AlgoEntry*> listed(const Registry& registry) {
  std::vector<const AlgoEntry*> es;
  for (const auto& e : registry.all()) es.push_back(&e);
  const auto key = [](const AlgoEntry* e) {
    const int kind = e->algo == "library" ? 0 : e->algo.starts_with("library:") ? 1 : 2;
    return std::tuple(static_cast<int>(e->op), e->library() ? 0 : 1, e->library() ? e->backend : std::string(), kind,
                      e->algo);
  };
  std::stable_sort(es.begin(), es.end(), [&](const AlgoEntry* a, const AlgoEntry* b) { return key(a) < key(b); });
  return es;
}

bool wanted(const ListFilter& f, const AlgoEntry& e) {
  const bool op = f.ops.empty() || std::find(f.ops.begin(), f.ops.end(), OpChoice{e.op}) != f.ops.end();
  return op && (!f.backend || e.backend == *f.backend || e.backend == "any");
}

// Why `b` cannot run here on its first device ("" when it can).
std::string unavailable_here(const BackendInfo& b) { return b.unavailable ? b.unavailable(b.devices.front()) : ""; }

}  // namespace

void print_algorithm_list(std::FILE* out, const Registry& registry, const ListFilter& filter) {
  constexpr std::size_t kWidth = 100;
  std::vector<const AlgoEntry*> es;
  for (const AlgoEntry* e : listed(registry))
    if (wanted(filter, *e)) es.push_back(e);
  const bool methods = filter.ops.empty() || std::find(filter.ops.begin(), filter.ops.end(), OpChoice{Pingpong{}}) !=
                                                 filter.ops.end();
  // Columns as wide as their longest name, so no name breaks them (library:scatter_allgather_ring).
  std::size_t op_w = std::string_view("op").size(), algo_w = std::string_view("algo").size(), be_w = 7;
  for (const auto* e : es) {
    op_w = std::max(op_w, op_name(e->op).size());
    algo_w = std::max(algo_w, e->algo.size());
    be_w = std::max(be_w, e->backend.size());
  }
  if (methods) {
    op_w = std::max(op_w, kPingpongOp.size());
    for (const auto& m : kP2pMethods) algo_w = std::max(algo_w, std::string_view(m.name).size());
  }
  // One op asked for: its name once, above, and no op column (more room for the descriptions).
  const bool one_op = filter.ops.size() == 1;
  if (one_op) {
    const OpChoice& c = filter.ops.front();
    std::fprintf(out, "%s:\n", std::holds_alternative<Op>(c) ? std::string(op_name(std::get<Op>(c))).c_str()
                                                              : std::string(kPingpongOp).c_str());
    op_w = 0;
  }
  const std::size_t indent = (one_op ? 2 : op_w + 1) + algo_w + be_w + 4;  // two spaces between algo and backend
  const auto row = [&](std::string_view op, std::string_view algo, std::string_view backend, std::string_view text) {
    std::string head(one_op ? "  " : op);
    if (!one_op) head.resize(op_w + 1, ' ');
    head += algo;
    head.resize((one_op ? 2 : op_w + 1) + algo_w + 2, ' ');
    head += backend;
    std::fputs(wrap_entry(head, text, indent, kWidth).c_str(), out);
  };
  row("op", "algo", "backend", "description");
  for (const auto* e : es) row(op_name(e->op), e->algo, e->backend, e->description);
  // Point-to-point methods: not registry entries (no Op), measured per rank pair (--pairs).
  if (methods)
    for (const auto& m : kP2pMethods) row(kPingpongOp, m.name, "any", m.description);
  const std::string pp = std::to_string(std::size(kP2pMethods)) + " pingpong methods";
  const std::string summary =
      es.empty() ? "(" + pp + "; no --algo: all of them)"
                 : "(" + std::to_string(es.size()) + " algorithms" + (methods ? " and " + pp : std::string()) +
                       "; backend 'any': every backend; no --algo: " +
                       (std::any_of(es.begin(), es.end(), [](const AlgoEntry* e) { return e->algo == "library"; })
                            ? "'library', the backend's own"
                            : "every one (no library of its own)") +
                       (methods ? ", pingpong's: all" : "") +
                       "; requirements: --list --json; --list --op OP --backend B: theirs only)";
  std::fputs(wrap_entry("", summary, 1, kWidth).c_str(), out);
  if (filter.backend && !filter.ops.empty()) {  // what the backend filter left out
    std::map<std::string, int> others;
    for (const AlgoEntry* e : listed(registry))
      if (!wanted(filter, *e) && wanted(ListFilter{filter.ops, std::nullopt}, *e)) ++others[e->backend];
    for (const auto& [name, n] : others) {
      const std::string text =
          "(not shown: " + std::to_string(n) + " entries of backend " + name + ": --list --backend " + name + ")";
      std::fputs(wrap_entry("", text, 1, kWidth).c_str(), out);
    }
  }
  for (const BackendInfo& b : Backends::get().all()) {
    if (filter.backend && b.name != *filter.backend) continue;
    if (!filter.ops.empty() && !filter.backend) continue;  // one op's list: its entries only
    std::string devices;
    for (const auto& d : b.devices) devices += (devices.empty() ? "" : ", ") + d;
    const std::string text = "(backend " + b.name + ": " + b.summary + "; ranks start with: " + [&] {
                               std::string s;
                               for (const auto& x : b.bootstraps) s += (s.empty() ? "" : ", ") + x;
                               return s;
                             }() + "; devices: " + devices +
                             (unavailable_here(b).empty() ? "" : "; not available here") + ")";
    std::fputs(wrap_entry("", text, 1, kWidth).c_str(), out);  // "(backend ...": lines past "(" indented
  }
}

std::string algorithm_list_json(const Registry& registry) {
  nlohmann::ordered_json methods = nlohmann::ordered_json::array();
  for (const auto& m : kP2pMethods) methods.push_back({{"algo", m.name}, {"description", m.description}});
  nlohmann::ordered_json backends = nlohmann::ordered_json::array();
  for (const BackendInfo& b : Backends::get().all()) {
    const std::string why = unavailable_here(b);
    backends.push_back({{"name", b.name},
                        {"summary", b.summary},
                        {"bootstraps", b.bootstraps},
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
