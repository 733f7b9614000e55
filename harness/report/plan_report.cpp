#include "harness/report/plan_report.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "collectives/backends/backend.hpp"
#include "collectives/core/error.hpp"
#include "harness/exit_status.hpp"
#include "harness/plan/auto_algos.hpp"
#include "harness/results/bandwidth.hpp"
#include "harness/runtime/cache_pool.hpp"
#include "harness/runtime/memcheck.hpp"

namespace collbench {
namespace {

std::string mib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

std::string size_range(const std::vector<SizePoint>& sizes) {
  if (sizes.empty()) return "no sizes";
  return std::to_string(sizes.front().bytes) + " .. " + std::to_string(sizes.back().bytes) + " B (" +
         std::to_string(sizes.size()) + " sizes)";
}

std::string timing(const Settings& s) {
  char timeout[32];
  std::snprintf(timeout, sizeof timeout, "%g", s.timeout_s);
  return "iters " + std::to_string(s.iters) + ", warmup " + std::to_string(s.warmup) + ", mode " +
         timing_mode_name(s.mode()) + ", sync " + sync_method_name(s.sync) + ", timeout " + timeout + " s" +
         (s.cache_cold ? ", cache cold" : "") + (s.per_rank ? ", per rank" : "");
}

std::string duration(double s) {
  char buf[48];
  if (s < 90) std::snprintf(buf, sizeof buf, "%.0f s", std::max(1.0, s));
  else if (s < 5400) std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
  else std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  return buf;
}

double block_seconds(const Block& b, int world) {
  const Settings& s = settings_of(b);
  double t = 0;
  if (const auto* c = std::get_if<CollectiveBlock>(&b)) {
    for (const SizePoint& p : block_sizes(b, world))
      t += static_cast<double>(c->algos.size()) * point_seconds(s, assumed_call_us(c->op, p.bytes, world), p.bytes);
  } else if (const auto* d = std::get_if<DdpBlock>(&b)) {
    double step_us = 0;  // every bucket all-reduced back to back
    for (const auto& k : d->buckets) step_us += assumed_call_us(Op::allreduce, k.bytes, world);
    t = static_cast<double>(d->algos.size()) * point_seconds(s, step_us, d->grad_bytes());
  } else {  // pingpong: one pair's round trip per iteration (a bw window: 64 messages); per pair
    for (const SizePoint& p : block_sizes(b, world)) t += point_seconds(s, assumed_call_us(Op::broadcast, p.bytes, 2), p.bytes);
  }
  return t;
}

}  // namespace

double assumed_call_us(Op op, std::uint64_t bytes, int world) {
  const int n = std::max(world, 2);
  const double steps = std::ceil(std::log2(static_cast<double>(n)));
  return steps * kAssumedStepUs + static_cast<double>(bytes) * busbw_factor(op, n) / (kAssumedGBps * 1e3);
}

double point_seconds(const Settings& s, double call_us, std::uint64_t bytes) {
  constexpr double kMinWarmupS = 0.005;  // measure.hpp TimingSpec::min_warmup_s
  constexpr double kPerPointS = 0.001;   // the control plane's agreements around a point
  constexpr int kConventionOps = 10;     // the other reference tool's round (measure.hpp)
  constexpr double kCheckGBps = 1;       // verification reads the result once
  const double op = call_us * 1e-6;
  // A per-iteration sample occupies its start window (about twice the op) or a barrier; a
  // batch runs its ops back to back. Adaptive: samples until they have taken --min-time (wall
  // time counts, measure.hpp keep_going), at most --max-iters ops.
  const double per_op = s.batch ? op : 3 * op + 5e-6;
  double timed_ops = s.iters;
  if (s.adaptive())
    timed_ops = std::clamp(s.min_time_s / per_op, static_cast<double>(s.iters), static_cast<double>(s.max_iters));
  const double timed = timed_ops * per_op;
  const double check = s.check ? 2 * op + static_cast<double>(bytes) / (kCheckGBps * 1e9) : 0;
  return std::max(s.warmup * op, kMinWarmupS) + timed + kConventionOps * op + check + kPerPointS;
}

double estimated_seconds(const std::vector<Block>& plan, int world) {
  double t = kRunSetupS;
  for (const Block& b : plan) t += block_seconds(b, world);
  return t;
}

int dry_run_world(const RunConfig& cfg, const LaunchEnv& launch) {
  if (cfg.ranks) return *cfg.ranks;
  if (const BackendInfo* b = Backends::get().find(cfg.backend))  // a bootstrap that starts its own ranks
    if (const BootstrapInfo* boot = Backends::get().find_bootstrap(b->bootstraps.back()); boot && boot->default_ranks)
      return boot->default_ranks();
  return launch.size.value_or(1);
}

int dry_run(const RunConfig& cfg, const std::vector<Block>& plan, const LaunchEnv& launch, bool speaker,
            std::FILE* out) {
  const int world = dry_run_world(cfg, launch);
  check_plan_for_world(plan, world);
  const std::uint64_t available = available_host_memory();
  const std::uint64_t llc = last_level_cache().bytes;  // this machine's: a dry run has no other ranks to ask
  if (auto why = plan_memory_problem(plan, world, world, available, cfg.device == "cuda", llc)) throw UsageError(*why);
  if (has_auto(plan)) Tuning::parse(read_tuning_file(*cfg.tuning_path), *cfg.tuning_path);  // a bad file fails here too
  if (!speaker) return code(ExitStatus::ok);

  std::fprintf(out, "collbench dry run: %d rank(s) on one node, backend %s, device %s%s\n", world, cfg.backend.c_str(),
               cfg.device.c_str(), cfg.config_path ? (", sweep " + *cfg.config_path).c_str() : "");
  long points = 0;
  int n = 0;
  for (const Block& b : plan) {
    const auto sizes = block_sizes(b, world);
    const Settings& s = settings_of(b);
    if (const auto* c = std::get_if<CollectiveBlock>(&b)) {
      std::string algos;
      for (const AlgoEntry* e : c->algos) algos += (algos.empty() ? "" : ",") + e->algo;
      std::fprintf(out, "block %d: %s algo=%s dtype=%s", ++n, std::string(op_name(c->op)).c_str(), algos.c_str(),
                   std::string(dtype_name(c->dtype)).c_str());
      if (c->redop) std::fprintf(out, " redop=%s", std::string(redop_name(*c->redop)).c_str());
      if (c->root) std::fprintf(out, " root=%d", *c->root);
      std::fprintf(out, " in_place=%d\n", c->in_place ? 1 : 0);
      std::fprintf(out, "  %s; %s; about %s\n", size_range(sizes).c_str(), timing(s).c_str(),
                   duration(block_seconds(b, world)).c_str());
      if (!sizes.empty()) {
        const std::uint64_t copies = buffer_copies(s, c->algos.size());
        const PointMemory m = point_memory_need(c->op, sizes.back().chunk_count, c->dtype, world,
                                                s.cache_cold ? cold_pool_target(s, llc) : 0, copies);
        std::fprintf(out, "  memory per rank at %llu B: %s (buffers %s%s + extra %s)\n",
                     static_cast<unsigned long long>(sizes.back().bytes), mib(m.total()).c_str(), mib(m.buffers).c_str(),
                     s.cache_cold ? ", a cold pool" : copies > 1 ? ", one set per interleaved algorithm" : "",
                     mib(m.extra).c_str());
      }
      points += static_cast<long>(sizes.size() * c->algos.size());
    } else if (const auto* d = std::get_if<DdpBlock>(&b)) {
      std::string algos;
      for (const AlgoEntry* e : d->algos) algos += (algos.empty() ? "" : ",") + e->algo;
      std::fprintf(out, "block %d: workload ddp model=%s (%lld parameters, %zu tensors) algo=%s redop=%s\n", ++n,
                   d->model.name.c_str(), static_cast<long long>(d->model.count()), d->model.params.size(), algos.c_str(),
                   std::string(redop_name(d->redop)).c_str());
      std::fprintf(out, "  %zu buckets (cap %g MiB, first 1 MiB), %s of gradients; %s\n", d->buckets.size(),
                   s.bucket_cap_mb, mib(d->grad_bytes()).c_str(), timing(s).c_str());
      std::fprintf(out, "  memory per rank: %s (gradients and buckets)\n", mib(ddp_memory_need(*d, world)).c_str());
      points += static_cast<long>(d->algos.size());
    } else {
      const auto& p = std::get<P2pBlock>(b);
      std::fprintf(out, "block %d: pingpong algo=%s pairs=%s\n  %s; %s\n", ++n, p2p_method_name(p.method),
                   pairs_text(s.pairs).c_str(), size_range(sizes).c_str(), timing(s).c_str());
      points += static_cast<long>(sizes.size());  // per pair: the pairs are chosen on the real topology
    }
  }
  std::fprintf(out, "total: %d block(s), %ld point(s)%s; memory available on this node: %s\n", n, points,
               plan.end() != std::find_if(plan.begin(), plan.end(),
                                          [](const Block& b) { return std::holds_alternative<P2pBlock>(b); })
                   ? " (pingpong: per pair)"
                   : "",
               available ? mib(available).c_str() : "unknown");
  std::fprintf(out, "estimated time: about %s (assumed %g us per log2(ranks) step + bus bytes at %g GB/s per call; "
               "the table of a first run gives the real rates)\n",
               duration(estimated_seconds(plan, world)).c_str(), kAssumedStepUs, kAssumedGBps);
  if (cfg.json_path)
    std::fprintf(out, "results: %s (%s)\n", cfg.json_path->c_str(),
                 cfg.overwrite ? "truncated"
                 : cfg.resume  ? "resumed: points already recorded are skipped"
                               : "appended");
  if (cfg.expect)
    std::fprintf(out, "expect: %s (%zu entr%s; exit %d when a point falls below its reference)\n",
                 cfg.expect->path().c_str(), cfg.expect->entries().size(), cfg.expect->entries().size() == 1 ? "y" : "ies",
                 code(ExitStatus::below_expectation));
  return code(ExitStatus::ok);
}

}  // namespace collbench
