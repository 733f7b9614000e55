#include "harness/plan.hpp"

#include <algorithm>

#include "collectives/core/error.hpp"

namespace collbench {
namespace {

std::string names_of(const std::vector<const AlgoEntry*>& es) {
  std::string s;
  for (const auto* e : es) s += (s.empty() ? "" : ", ") + e->algo;
  return s;
}

std::vector<const AlgoEntry*> resolve_algos(Op op, const std::vector<std::string>& wanted, const std::string& backend,
                                            const Registry& registry) {
  const auto available = registry.for_op(op, backend);
  if (available.empty())
    throw UsageError("no algorithm is registered for op " + std::string(op_name(op)) + " on backend " + backend +
                     "; accepted: another op");
  if (wanted.empty()) return available;  // "all"
  std::vector<const AlgoEntry*> out;
  for (const auto& name : wanted) {
    const AlgoEntry* e = registry.find(op, name, backend);
    if (!e)
      throw UsageError("unknown algo '" + name + "' for op " + std::string(op_name(op)) + " (backend " + backend +
                       "); accepted: " + names_of(available) + ", all");
    out.push_back(e);
  }
  return out;
}

}  // namespace

std::vector<Block> make_plan(const RunConfig& cfg, const Registry& registry) {
  std::vector<Block> plan;
  for (const auto& c : cfg.cases) {
    for (Op op : c.ops) {
      const auto algos = resolve_algos(op, c.algos, cfg.backend, registry);
      const std::vector<std::optional<RedOp>> redops =
          op_reduces(op) ? std::vector<std::optional<RedOp>>(c.settings.redops.begin(), c.settings.redops.end())
                         : std::vector<std::optional<RedOp>>{std::nullopt};
      for (DType dt : c.settings.dtypes)
        for (const auto& rop : redops)
          for (bool ip : c.settings.placements) {
            Block b{op, algos, dt, rop, std::nullopt, ip, c.settings};
            if (op_has_root(op)) b.root = c.settings.root;
            plan.push_back(std::move(b));
          }
    }
  }
  return plan;
}

void check_plan_for_world(const std::vector<Block>& plan, int world_size) {
  for (const auto& b : plan)
    if (b.root && *b.root >= world_size)
      throw UsageError("--root " + std::to_string(*b.root) + " is out of range for " + std::string(op_name(b.op)) +
                       " on " + std::to_string(world_size) + " ranks; accepted: 0.." + std::to_string(world_size - 1));
}

}  // namespace collbench
