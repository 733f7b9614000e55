#include "harness/plan/plan.hpp"

#include <algorithm>

#include "collectives/core/error.hpp"
#include "harness/plan/auto_algos.hpp"
#include "harness/plan/spelling.hpp"

namespace collbench {
namespace {

constexpr const char* kLibraryVariants = "library:all";
constexpr const char* kLibraryAlgo = "library";

std::string names_of(const std::vector<const AlgoEntry*>& es) {
  std::string s;
  for (const auto* e : es) s += (s.empty() ? "" : ", ") + e->algo;
  return s;
}

// The registry's entry for a typed name: exact, else the one whose name folds alike (case,
// '_', '-'), else nothing.
const AlgoEntry* find_algo(const std::vector<const AlgoEntry*>& available, const std::string& name) {
  std::vector<std::string> names;
  for (const AlgoEntry* e : available) {
    if (e->algo == name) return e;
    names.push_back(e->algo);
  }
  if (const auto same = same_name(name, names))
    for (const AlgoEntry* e : available)
      if (e->algo == *same) return e;
  return nullptr;
}

std::vector<const AlgoEntry*> resolve_algos(Op op, const std::vector<std::string>& wanted, const std::string& backend,
                                            const Registry& registry) {
  const auto available = registry.for_op(op, backend);
  if (available.empty())
    throw UsageError("no algorithm is registered for op " + std::string(op_name(op)) + " on backend " + backend +
                     "; accepted: another op");
  // "all": every algorithm but the library's on-request variants; "library:all": those variants.
  const auto add_all = [&](std::vector<const AlgoEntry*>& out, bool variants) {
    for (const AlgoEntry* e : available)
      if (e->on_request == variants && std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  };
  std::vector<const AlgoEntry*> out;
  if (wanted.empty()) {  // the default: the backend's own collective, as nccl-tests measures
    if (const AlgoEntry* lib = find_algo(available, kLibraryAlgo)) return {lib};
    add_all(out, false);  // a backend without its own (thread): every algorithm
    return out;
  }
  for (const auto& name : wanted) {
    if (name == "all" || name == kLibraryVariants) {  // in a list ("all,auto"): those not named already
      add_all(out, name == kLibraryVariants);
      continue;
    }
    const AlgoEntry* e = name == kAutoAlgo ? &auto_entry(op) : find_algo(available, name);
    if (!e) {
      if (auto why = registry.elsewhere(name, backend)) throw UsageError("--algo " + name + ": " + *why);
      std::vector<std::string> names;
      for (const AlgoEntry* a : available) names.push_back(a->algo);
      throw UsageError("unknown algo '" + name + "' for op " + std::string(op_name(op)) + " (backend " + backend + ")" +
                       did_you_mean(name, names) + "; accepted: " + names_of(available) + ", all, " + kLibraryVariants +
                       ", auto (with --tuning)");
    }
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  }
  return out;
}

std::vector<P2pMethod> resolve_p2p_methods(const std::vector<std::string>& wanted) {
  std::string names;
  for (const auto& i : kP2pMethods) names += (names.empty() ? "" : ", ") + std::string(i.name);
  std::vector<P2pMethod> out;
  const bool all = wanted.empty() || std::find(wanted.begin(), wanted.end(), "all") != wanted.end();
  for (const auto& i : kP2pMethods)
    if (all) out.push_back(i.method);
  for (const auto& name : wanted) {
    if (name == "all") continue;
    const auto m = parse_p2p_method(name);
    if (!m) {
      std::vector<std::string> all_names;
      for (const auto& i : kP2pMethods) all_names.emplace_back(i.name);
      throw UsageError("unknown algo '" + name + "' for op pingpong" + did_you_mean(name, all_names) +
                       "; accepted: " + names + ", all");
    }
    if (std::find(out.begin(), out.end(), *m) == out.end()) out.push_back(*m);
  }
  return out;
}

const char* p2p_mode_clash(const Settings& s) {
  if (s.batch) return "--batch";
  if (s.interleave) return "--interleave";
  if (s.adaptive()) return "--min-time/--max-noise";
  if (s.cache_cold) return "--cache cold";
  if (s.per_rank) return "--per-rank";
  return nullptr;
}

// One block per method; pingpong times OSU-style back-to-back iterations per pair, so the
// collective timing modes do not apply to it.
void add_p2p_blocks(std::vector<Block>& plan, const CaseSpec& c) {
  const Settings& s = c.settings;
  if (const char* clash = p2p_mode_clash(s))
    throw UsageError(std::string(clash) + " does not apply to pingpong (its iterations run back-to-back per pair)" +
                     "; accepted: pingpong without it, or in a separate case");
  for (P2pMethod m : resolve_p2p_methods(c.algos)) plan.push_back(P2pBlock{m, s});
}

// One block per redop: the model read (or generated) and bucketed here, so a bad model file or
// order file fails before anything runs, on every rank alike.
void add_ddp_blocks(std::vector<Block>& plan, const CaseSpec& c, const std::string& backend, const Registry& registry) {
  const Settings& s = c.settings;
  for (const OpChoice& choice : c.ops)
    if (!std::holds_alternative<Op>(choice) || std::get<Op>(choice) != Op::allreduce)
      throw UsageError("--workload ddp all-reduces gradients; accepted: --op allreduce (the default for a workload)");
  const auto algos = resolve_algos(Op::allreduce, c.algos, backend, registry);
  workload::Model model = workload::resolve_model(s.model);
  const std::vector<std::size_t> ready =
      s.grad_order.empty() ? workload::reverse_registration_order(model) : workload::load_ready_order(s.grad_order, model);
  const auto cap = static_cast<std::uint64_t>(s.bucket_cap_mb * double(1 << 20));
  std::vector<workload::Bucket> buckets =
      workload::assign_buckets(model, ready, std::max<std::uint64_t>(cap, 1), kDdpFirstBucketBytes, s.grad_dtype);
  // DDP averages gradients (each bucket divided by the world size, then summed): avg unless asked.
  std::optional<workload::ComputeProfile> profile;
  if (!s.compute_profile.empty()) profile = workload::load_compute_profile(s.compute_profile, model);
  for (RedOp r : s.redops_given ? s.redops : std::vector<RedOp>{RedOp::avg})
    plan.push_back(DdpBlock{algos, model, buckets, r, s, profile});
}

}  // namespace

std::uint64_t DdpBlock::grad_bytes() const {
  std::uint64_t b = 0;
  for (const auto& k : buckets) b += k.bytes;
  return b;
}

std::vector<const AlgoEntry*> planned_algorithms(const RunConfig& cfg, const Registry& registry) {
  std::vector<const AlgoEntry*> out;
  const auto add = [&](Op op, const CaseSpec& c) {
    for (const AlgoEntry* e : resolve_algos(op, c.algos, cfg.backend, registry))
      if (e != &auto_entry(op) && std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  };
  for (const auto& c : cfg.cases) {
    if (c.settings.workload == "ddp") {
      add(Op::allreduce, c);
      continue;
    }
    for (const OpChoice& choice : c.ops)
      if (const Op* op = std::get_if<Op>(&choice)) add(*op, c);
  }
  return out;
}

std::vector<Block> make_plan(const RunConfig& cfg, const Registry& registry) {
  std::vector<Block> plan;
  std::size_t table = 0;
  for (const auto& c : cfg.cases) {
    if (c.settings.cache_cold && cfg.device == "cuda")
      throw UsageError("--cache cold sizes its pool by the CPU's last-level cache, not a GPU's L2; accepted: --cache hot "
                       "with --device cuda");
    if (c.settings.workload == "ddp") {
      add_ddp_blocks(plan, c, cfg.backend, registry);
      continue;
    }
    for (const OpChoice& choice : c.ops) {
      if (std::holds_alternative<Pingpong>(choice)) {
        add_p2p_blocks(plan, c);
        continue;
      }
      const Op op = std::get<Op>(choice);
      const auto algos = resolve_algos(op, c.algos, cfg.backend, registry);
      const std::vector<std::optional<RedOp>> redops =
          op_reduces(op) ? std::vector<std::optional<RedOp>>(c.settings.redops.begin(), c.settings.redops.end())
                         : std::vector<std::optional<RedOp>>{std::nullopt};
      for (DType dt : c.settings.dtypes)
        for (const auto& rop : redops) {
          ++table;
          for (bool ip : c.settings.placements) {
            CollectiveBlock b{op, algos, dt, rop, std::nullopt, ip, c.settings, table};
            if (op_has_root(op)) b.root = c.settings.root;
            plan.push_back(std::move(b));
          }
        }
    }
  }
  if (has_auto(plan) && !cfg.tuning_path)
    throw UsageError(
        "--algo auto needs a tuning file; accepted: --tuning FILE (written by colltune), or tuning: in "
        "the sweep file's defaults");
  return plan;
}

void check_plan_for_world(const std::vector<Block>& plan, int world_size) {
  for (const auto& b : plan)
    if (const auto* p = std::get_if<P2pBlock>(&b))
      select_pairs(p->settings.pairs, std::vector<int>(static_cast<std::size_t>(world_size), 0));
  for (const auto& block : plan)
    if (const auto* b = std::get_if<CollectiveBlock>(&block); b && b->root && *b->root >= world_size)
      throw UsageError("--root " + std::to_string(*b->root) + " is out of range for " + std::string(op_name(b->op)) +
                       " on " + std::to_string(world_size) + " ranks; accepted: 0.." + std::to_string(world_size - 1));
}

std::vector<TableRange> table_ranges(const std::vector<Block>& plan) {
  std::vector<TableRange> out;
  const auto table_of = [&](std::size_t i) -> std::optional<std::size_t> {
    if (const auto* c = std::get_if<CollectiveBlock>(&plan[i])) return c->table;
    return std::nullopt;
  };
  for (std::size_t i = 0; i < plan.size();) {
    std::size_t j = i + 1;
    while (j < plan.size() && table_of(i) && table_of(j) == table_of(i)) ++j;
    out.push_back({i, j});
    i = j;
  }
  return out;
}

std::vector<SizePoint> block_sizes(const Block& b, int world_size) {
  const Settings& s = settings_of(b);
  const auto steps = size_steps(s.min_bytes, s.max_bytes, s.step_factor, s.step_bytes);
  if (const auto* c = std::get_if<CollectiveBlock>(&b))
    return size_points(steps, size_chunks(c->op, world_size), dtype_size(c->dtype));
  if (const auto* d = std::get_if<DdpBlock>(&b)) {  // one point: the whole step
    std::uint64_t elems = 0;
    for (const auto& k : d->buckets) elems += k.count;
    return {SizePoint{d->grad_bytes(), elems, elems}};
  }
  return size_points(steps, 1, dtype_size(DType::uint8));  // one message of raw bytes
}

}  // namespace collbench
