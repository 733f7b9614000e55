#include "harness/results/records.hpp"


#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <random>

#include "collectives/core/error.hpp"
#include "harness/plan/p2p_method.hpp"
#include "harness/plan/plan.hpp"

namespace collbench {
namespace {

using json = nlohmann::ordered_json;

template <class T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// Every key the registered backends, bootstraps and devices may fill (null when this run's did
// not), so a record's "versions" has the same keys whatever ran (results/schema checks them).
json versions_json(const Versions& v) {
  json j = json::object();
  j["collbench"] = v.collbench;
  for (const std::string& key : Backends::get().version_keys()) {
    if (key == "collbench") continue;
    j[key] = nullptr;
    for (const auto& [k, value] : v.facts)
      if (k == key) j[key] = std::visit([](const auto& x) { return json(x); }, value);
  }
  return j;
}

json stats_json(const Stats& s) {
  return {{"min", s.min}, {"p5", s.p5},   {"p50", s.p50}, {"mean", s.mean},
          {"p95", s.p95}, {"p99", s.p99}, {"max", s.max}, {"stdev", s.stdev}};
}

json settings_json(const Settings& s) {
  json dtypes = json::array(), redops = json::array();
  for (DType t : s.dtypes) dtypes.push_back(dtype_name(t));
  for (RedOp r : s.redops) redops.push_back(redop_name(r));
  const char* inplace = s.placements.size() > 1 ? "both" : s.placements.front() ? "1" : "0";
  json j = {{"min_bytes", s.min_bytes},
          {"max_bytes", s.max_bytes},
          {"step_factor", s.step_factor},
          {"step_bytes", s.step_bytes},
          {"iters", s.iters},
          {"warmup", s.warmup},
          {"check", s.check},
          {"dtype", dtypes},
          {"redop", redops},
          {"root", s.root},
          {"inplace", inplace},
          {"batch", s.batch},
          {"interleave", s.interleave},
          {"timeout", s.timeout_s},
          {"min_time", s.min_time_s},
          {"max_noise", s.max_noise},
          {"max_iters", s.max_iters},
          {"segment", s.segment_bytes},
          {"mode", timing_mode_name(s.mode())},
          {"pairs", pairs_text(s.pairs)},
          {"sync", sync_method_name(s.sync)},
          {"buffers", s.registered_buffers ? "registered" : "plain"},
          {"cache", s.cache_cold ? "cold" : "hot"},
          {"cache_pool", s.cache_pool_bytes},
          {"per_rank", s.per_rank}};
  if (!s.workload.empty()) {  // absent for sweeps (as in older records)
    j["workload"] = s.workload;
    j["model"] = s.model;
    j["bucket_cap_mb"] = s.bucket_cap_mb;
    j["grad_dtype"] = s.grad_dtype ? json(dtype_name(*s.grad_dtype)) : json(nullptr);
    j["grad_order"] = s.grad_order.empty() ? json(nullptr) : json(s.grad_order);
    j["compute_ms"] = s.compute_ms ? json(*s.compute_ms) : json(nullptr);
    j["compute_profile"] = s.compute_profile.empty() ? json(nullptr) : json(s.compute_profile);
  }
  return j;
}

json calibration_json(const Calibration& c) {
  return {{"timer", "steady_clock"},
          {"timer_resolution_ns", c.timer_resolution_ns},
          {"timer_read_ns", c.timer_read_ns},
          {"barrier_us", c.barrier_us},
          {"barrier_reps", c.barrier_reps},
          {"clock_sync_error_us", c.clock_sync_error_us},
          {"clock_sync_rounds", c.clock_sync_rounds},
          {"clock_offset_us", c.clock_offset_us},
          {"clock_shared", c.clock_shared}};
}

json hardware_json(const NodeHardware& h) {
  json caches = json::array();
  for (const auto& c : h.caches)
    caches.push_back({{"level", c.level}, {"type", c.type}, {"size_bytes", c.size_bytes}, {"count", c.count}});
  json j = {{"host", h.host},
            {"cpu_model", h.cpu_model.empty() ? json(nullptr) : json(h.cpu_model)},
            {"packages", h.packages},
            {"numa_nodes", h.numa_nodes},
            {"cores", h.cores},
            {"pus", h.pus},
            {"caches", caches},
            {"hwloc", h.hwloc.empty() ? json(nullptr) : json(h.hwloc)}};
  if (!h.error.empty()) j["error"] = h.error;
  return j;
}

json link_json(const std::optional<LinkRate>& l) {
  if (!l) return nullptr;
  json j{{"GBps", l->GBps}, {"src", l->src}, {"dst", l->dst}, {"bytes", l->bytes}, {"method", "bw"}};
  if (l->samples > 0) {  // a calibration's own; unknown for a rate built without one
    j["samples"] = l->samples;
    j["spread"] = l->spread;
  }
  if (!l->reused_from.empty()) j["reused_from"] = l->reused_from;
  return j;
}

// The run record's provenance and link fields (absent when not gathered, as in older records).
void add_provenance(json& j, const RunRecord& r) {
  if (r.provenance) {
    const Provenance& p = *r.provenance;
    j["cpu_model"] = p.nodes.empty() || p.nodes.front().cpu_model.empty() ? json(nullptr) : json(p.nodes.front().cpu_model);
    json nodes = json::array(), binding = json::array();
    for (const auto& h : p.nodes) nodes.push_back(hardware_json(h));
    for (const auto& b : p.binding_of_rank)
      binding.push_back({{"cpus", b.cpus}, {"numa", b.numa.empty() ? json(nullptr) : json(b.numa)}});
    j["hardware"] = std::move(nodes);
    j["binding"] = std::move(binding);
  }
  if (r.links) j["links"] = {{"intra", link_json(r.links->intra)}, {"inter", link_json(r.links->inter)}};
}

// Linear-interpolation quantile (numpy's default) of a copy.
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(at);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

double ns_rounded(double us) { return std::round(us * 1e3) / 1e3; }

json rounded(const std::vector<std::vector<double>>& m) {
  json out = json::array();
  for (const auto& row : m) {
    json r = json::array();
    for (double v : row) r.push_back(ns_rounded(v));
    out.push_back(std::move(r));
  }
  return out;
}

// --per-rank: the matrices (within kPerRankMaxValues) and a summary per rank that is always
// there: quartiles of its own time, how many samples it was the slowest rank in (ties: the
// lowest rank), the median of its start skew.
json per_rank_json(const PointResult::PerRank& p) {
  const std::size_t ranks = p.time_us.size();
  const std::size_t samples = ranks ? p.time_us.front().size() : 0;
  json p25 = json::array(), p50 = json::array(), p75 = json::array(), skew = json::array();
  std::vector<long> slowest(ranks, 0);
  for (std::size_t i = 0; i < samples; ++i) {
    std::size_t top = 0;
    for (std::size_t r = 1; r < ranks; ++r)
      if (p.time_us[r][i] > p.time_us[top][i]) top = r;
    ++slowest[top];
  }
  for (std::size_t r = 0; r < ranks; ++r) {
    p25.push_back(ns_rounded(quantile(p.time_us[r], 0.25)));
    p50.push_back(ns_rounded(quantile(p.time_us[r], 0.5)));
    p75.push_back(ns_rounded(quantile(p.time_us[r], 0.75)));
    skew.push_back(ns_rounded(quantile(p.start_skew_us[r], 0.5)));
  }
  const bool whole = ranks * samples <= kPerRankMaxValues;
  return {{"start", p.start_ref},
          {"ranks", ranks},
          {"samples", samples},
          {"time_us", whole ? rounded(p.time_us) : json(nullptr)},
          {"start_skew_us", whole ? rounded(p.start_skew_us) : json(nullptr)},
          {"summary",
           {{"time_p25_us", p25},
            {"time_p50_us", p50},
            {"time_p75_us", p75},
            {"slowest_samples", slowest},
            {"start_skew_p50_us", skew}}}};
}

}  // namespace

json config_json(const RunConfig& cfg) {
  json cases = json::array();
  for (const auto& c : cfg.cases) {
    json ops = json::array();
    for (const OpChoice& choice : c.ops)
      ops.push_back(std::holds_alternative<Op>(choice) ? op_name(std::get<Op>(choice)) : kPingpongOp);
    cases.push_back({{"ops", ops},
                     {"algos", json(c.algos)},  // as given: [] = the default (library), ["all"]; "all" in older records
                     {"settings", settings_json(c.settings)},
                     {"origin", c.origin}});
  }
  return {{"name", cfg.name},
          {"config_file", opt(cfg.config_path)},
          {"backend", cfg.backend},
          {"device", cfg.device},
          {"json", opt(cfg.json_path)},
          {"overwrite", cfg.overwrite},
          {"layouts", cfg.layouts},
          {"cases", cases},
          {"keep_samples", cfg.keep_samples}};
}

json run_json(const RunRecord& r) {
  json slurm = nullptr;
  if (r.slurm) slurm = json(*r.slurm);
  json j = {{"type", "run"},
          {"schema", kSchema},
          {"run_id", r.run_id},
          {"argv", r.argv},
          {"start_time", r.start_time},
          {"hosts", r.topology.hosts},
          {"host_of_rank", r.topology.host_of_rank},
          {"node_of_rank", r.topology.node_of_rank},
          {"world_size", r.topology.world_size},
          {"nodes", r.topology.nodes},
          {"ranks_per_node", r.topology.ranks_per_node},
          {"uneven_layout", r.topology.uneven},
          {"backend", r.backend},
          {"device", r.device},
          {"versions", versions_json(r.versions)},
          {"git_commit", r.versions.git_commit},
          {"slurm", slurm},
          {"config", r.config ? config_json(*r.config) : json(nullptr)},
          {"calibration", r.calibration ? calibration_json(*r.calibration) : json(nullptr)},
          {"inter_node_link", opt(r.inter_node_link)}};
  add_provenance(j, r);
  // The traits of everything the plan can measure, from the registry: what the analysis reads
  // instead of guessing from names (docs/records.md "Algorithm traits").
  if (r.config) j["algorithms"] = algorithms_json(planned_algorithms(*r.config, Registry::get()));
  j["loadavg"] = opt(r.loadavg);
  j["online_cpus"] = r.online_cpus > 0 ? json(r.online_cpus) : json(nullptr);
  return j;
}

// A --workload ddp record: the step's sync time as a result's timing fields, plus the model,
// its buckets and each bucket's all-reduce time.
json workload_json(const PointResult& r, const std::string& run_id) {
  const PointResult::Ddp& d = *r.ddp;
  json buckets = json::array();
  for (std::size_t k = 0; k < d.buckets.size(); ++k) {
    const auto& b = d.buckets[k];
    json one = {{"index", k}, {"tensors", b.tensors}, {"count", b.count}, {"bytes", b.bytes}, {"dtype", b.dtype},
                {"first", b.first}, {"last", b.last}, {"params", b.params}};
    if (b.chosen) {  // --algo auto only
      one["chosen"] = *b.chosen;
      one["tuning"] = opt(b.tuning);
    }
    buckets.push_back(std::move(one));
  }
  json compute = nullptr;
  if (d.compute_ms) {
    compute = {{"forward_ms", (*d.compute_ms)[0]},
               {"backward_ms", (*d.compute_ms)[1]},
               {"optimizer_ms", (*d.compute_ms)[2]},
               {"source", d.compute_source}};
    if (!d.bucket_backward_ms.empty()) compute["bucket_backward_ms"] = d.bucket_backward_ms;
  }
  json j = {{"type", "workload"},
          {"schema", kSchema},
          {"run_id", run_id},
          {"workload", "ddp"},
          {"op", r.op},
          {"algo", r.algo},
          {"backend", r.backend},
          {"device", r.device},
          {"world_size", r.world_size},
          {"nodes", r.nodes},
          {"ranks_per_node", r.ranks_per_node},
          {"model", d.model},
          {"model_source", d.model_source},
          {"param_count", d.param_count},
          {"param_tensors", d.param_tensors},
          {"grad_dtype", r.dtype},
          {"redop", opt(r.redop)},
          {"grad_bytes", r.bytes},
          {"bucket_cap_mb", d.bucket_cap_mb},
          {"first_bucket_cap_mb", d.first_bucket_cap_mb},
          {"grad_order", d.grad_order},
          {"buckets", buckets},
          {"mode", timing_mode_name(r.mode)},
          {"sync", sync_method_name(r.sync)},
          {"sync_fallback", opt(r.sync_fallback)},
          {"late", r.late},
          {"iters", r.iters},
          {"warmup", r.warmup},
          {"step_us", r.time_us ? stats_json(*r.time_us) : json(nullptr)},
          {"busbw_GBps", opt(r.busbw_GBps)},
          {"bucket_p50_us", d.bucket_p50_us},
          {"compute", compute},
          {"checked", r.checked},
          {"wrong", r.wrong},
          {"skipped", r.skipped},
          {"skip_reason", opt(r.skip_reason)}};
  if (r.per_rank) j["per_rank"] = per_rank_json(*r.per_rank);
  return j;
}

// {"setting": "value", ...} in the library's order, or null for custom algorithms.
json library_config_json(const PointResult& r) {
  if (!r.library_config) return nullptr;
  json c = json::object();
  for (const auto& [k, v] : *r.library_config) c[k] = v;
  return c;
}

json result_json(const PointResult& r, const std::string& run_id, long keep_samples) {
  if (r.ddp) return workload_json(r, run_id);
  json j = {{"type", "result"},
            {"schema", kSchema},
            {"run_id", run_id},
            {"op", r.op},
            {"algo", r.algo},
            {"backend", r.backend},
            {"device", r.device},
            {"dtype", r.dtype},
            {"redop", opt(r.redop)},
            {"root", opt(r.root)},
            {"in_place", r.in_place},
            {"bytes", r.bytes},
            {"count", r.count},
            {"world_size", r.world_size},
            {"nodes", r.nodes},
            {"ranks_per_node", r.ranks_per_node},
            {"iters", r.iters},
            {"samples", r.time_us ? r.time_us->samples : 0},
            {"warmup", r.warmup},
            {"mode", timing_mode_name(r.mode)},
            {"time_us", r.time_us ? stats_json(*r.time_us) : json(nullptr)},
            {"algbw_GBps", opt(r.algbw_GBps)},
            {"busbw_GBps", opt(r.busbw_GBps)},
            {"wrong", r.wrong},
            {"checked", r.checked},
            {"skipped", r.skipped},
            {"skip_reason", opt(r.skip_reason)},
            {"sync", sync_method_name(r.sync)},
            {"sync_fallback", opt(r.sync_fallback)},
            {"late", r.late},
            {"start_skew_us", opt(r.start_skew_us)},
            {"window_us", opt(r.window_us)},
            {"osu_avg_us", opt(r.osu_avg_us)},
            {"nccl_avg_us", opt(r.nccl_avg_us)},
            {"efficiency", opt(r.efficiency)},
            {"library_config", library_config_json(r)}};
  if (r.registered_buffers) j["buffers"] = "registered";  // absent: plain (as in older records)
  if (r.peer_claim)
    j["peer_claim"] = {{"claims", r.peer_claim->claims},
                       {"traffic_bytes", r.peer_claim->traffic_bytes},
                       {"max_traffic_bytes", r.peer_claim->max_traffic_bytes},
                       {"l1_bytes", r.peer_claim->l1_bytes},
                       {"l2_bytes", r.peer_claim->l2_bytes},
                       {"llc_bytes", r.peer_claim->llc_bytes},
                       {"stage_bytes", r.peer_claim->stage_bytes},
                       {"segment_bytes", r.peer_claim->segment_bytes},
                       {"probe",
                        {{"measured", r.peer_claim->probe.measured},
                         {"pays", r.peer_claim->probe.pays},
                         {"bytes", r.peer_claim->probe.bytes},
                         {"shared_ns", r.peer_claim->probe.shared_ns},
                         {"claimed_ns", r.peer_claim->probe.claimed_ns}}},
                       {"kernel_copy", r.peer_claim->kernel_copy},
                       {"kernel_probe",
                        {{"measured", r.peer_claim->kernel_probe.measured},
                         {"available", r.peer_claim->kernel_probe.available},
                         {"from_bytes", r.peer_claim->kernel_probe.from_bytes},
                         {"bytes", r.peer_claim->kernel_probe.bytes},
                         {"staged_ns", r.peer_claim->kernel_probe.staged_ns},
                         {"kernel_ns", r.peer_claim->kernel_probe.kernel_ns}}},
                       {"streams", r.peer_claim->streams},
                       {"stream_probe",
                        {{"measured", r.peer_claim->stream_probe.measured},
                         {"from_bytes", r.peer_claim->stream_probe.from_bytes},
                         {"bytes", r.peer_claim->stream_probe.bytes},
                         {"plain_ns", r.peer_claim->stream_probe.plain_ns},
                         {"streaming_ns", r.peer_claim->stream_probe.streaming_ns}}}};
  j["cache"] = r.cache_cold ? "cold" : "hot";             // older records: absent (hot)
  if (r.cache_pool)
    j["cache_pool"] = {{"bytes", r.cache_pool->bytes},
                       {"sets", r.cache_pool->sets},
                       {"set_bytes", r.cache_pool->set_bytes},
                       {"llc_bytes", r.cache_pool->llc_bytes},
                       {"llc_source", r.cache_pool->llc_source},
                       {"verified_sets", r.cache_pool->verified_sets}};
  if (r.per_rank) j["per_rank"] = per_rank_json(*r.per_rank);
  if (r.chosen) {                                         // --algo auto only
    j["chosen"] = *r.chosen;
    j["tuning"] = opt(r.tuning);
    j["tuning_match"] = opt(r.tuning_match);
  }
  if (r.link) {  // point-to-point records only
    j["src"] = opt(r.src);
    j["dst"] = opt(r.dst);
    j["link"] = *r.link;
  }
  if (r.time_us && !r.samples_us.empty() && static_cast<long>(r.samples_us.size()) <= keep_samples) {
    // Rounded to 1 ns, below the timer's resolution, so the field stays short (~7 characters a sample).
    json s = json::array();
    for (double us : r.samples_us) s.push_back(std::round(us * 1e3) / 1e3);
    j["samples_us"] = std::move(s);
  }
  return j;
}

json end_json(const EndRecord& e) {
  json j = {{"type", "end"},
          {"schema", kSchema},
          {"run_id", e.run_id},
          {"end_time", e.end_time},
          {"exit_status", e.exit_status},
          {"points", e.points},
          {"wrong_points", e.wrong_points},
          {"skipped_points", e.skipped_points},
          {"peak_rss_bytes", e.peak_rss_bytes}};
  if (e.expect) j["expect"] = {{"file", e.expect->file}, {"checked", e.expect->checked}, {"failed", e.expect->failed}};
  j["loadavg"] = opt(e.loadavg);
  return j;
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string random_run_id() {
  std::random_device rd;
  const std::uint64_t v = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
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

}  // namespace collbench
