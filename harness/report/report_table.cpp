#include "harness/report/report_table.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "harness/runtime/provenance.hpp"

namespace collbench {
namespace {

constexpr int kPrefixWidth = 47;  // size, count, type, redop, root
constexpr int kAlgoWidth = 41;    // time, algbw, busbw, eff, #wrong

std::string centered(const std::string& text, int width) {
  const int pad = std::max(0, width - static_cast<int>(text.size()));
  return std::string(static_cast<std::size_t>(pad - pad / 2), ' ') + text + std::string(static_cast<std::size_t>(pad / 2), ' ');
}

}  // namespace

int terminal_width() {
  if (const char* c = std::getenv("COLUMNS")) {
    const int w = std::atoi(c);
    if (w >= 40 && w <= 1000) return w;
  }
  return 132;
}

int TableReport::algos_per_table(int width) { return std::max(1, (width - kPrefixWidth) / kAlgoWidth); }

TableReport::TableReport(std::FILE* out, int width) : out_(out), width_(width) {}

void TableReport::header(const RunRecord& run) {
  const Topology& t = run.topology;
  host_of_rank_ = t.host_of_rank;
  std::fprintf(out_, "# collbench %s (git %s)  run %s  %s\n", run.versions.collbench.c_str(),
               run.versions.git_commit.c_str(), run.run_id.c_str(), run.start_time.c_str());
  if (const std::string mpi = run.versions.fact("mpi"); !mpi.empty()) std::fprintf(out_, "# MPI: %s\n", mpi.c_str());
  std::fprintf(out_, "# world %d ranks: %d node%s x %d ranks per node%s   backend %s   device %s\n", t.world_size,
               t.nodes, t.nodes == 1 ? "" : "s", t.ranks_per_node, t.uneven ? " (max; uneven)" : "",
               run.backend.c_str(), run.device.c_str());
  for (int n = 0; n < t.nodes; ++n) {
    std::vector<int> ranks;
    for (int r = 0; r < t.world_size; ++r)
      if (t.node_of_rank[r] == n) ranks.push_back(r);
    std::fprintf(out_, "#   node %d  %-20s ranks %s\n", n, t.host_of_rank[ranks.front()].c_str(), int_ranges_text(ranks).c_str());
  }
  if (const auto& c = run.calibration)
    std::fprintf(out_, "# calibration: steady_clock resolution %.0f ns, read %.0f ns; empty barrier %.2f us; clock sync error <= %.2f us\n",
                 c->timer_resolution_ns, c->timer_read_ns, c->barrier_us, c->clock_sync_error_us);
  if (const auto& p = run.provenance)
    for (std::size_t n = 0; n < p->nodes.size(); ++n) {
      const NodeHardware& h = p->nodes[n];
      std::fprintf(out_, "# hardware node %zu: %s; %d package%s, %d NUMA node%s, %d cores, %d PUs\n", n,
                   h.cpu_model.empty() ? "cpu model unknown" : h.cpu_model.c_str(), h.packages, h.packages == 1 ? "" : "s",
                   h.numa_nodes, h.numa_nodes == 1 ? "" : "s", h.cores, h.pus);
    }
  if (const auto& la = run.loadavg) {  // results/README.md "run record": loadavg
    const double worst = std::max((*la)[0], (*la)[1]);  // the 15-min average lags a load that just started
    std::fprintf(out_, "# load %.2f %.2f %.2f (1, 5, 15 min) on %d online CPUs%s\n", (*la)[0], (*la)[1], (*la)[2],
                 run.online_cpus,
                 run.online_cpus > 0 && worst > run.online_cpus ? ": above the CPUs, timings include waits for a CPU"
                                                                  : "");
  }
  if (const auto& l = run.links) {  // what the eff column is judged against (docs/measurement.md "Efficiency")
    std::string text;
    for (const auto& [name, rate] : {std::pair{"intra", &l->intra}, std::pair{"inter", &l->inter}}) {
      if (!*rate) continue;
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s %.2f GB/s (ranks %d-%d), ", name, (*rate)->GBps, (*rate)->src, (*rate)->dst);
      text += buf;
    }
    if (!text.empty())
      std::fprintf(out_, "# links: %sosu_bw %llu KiB\n", text.c_str(),
                   static_cast<unsigned long long>((l->intra ? l->intra->bytes : l->inter->bytes) >> 10));
  }
  if (run.slurm && run.slurm->count("job_id"))
    std::fprintf(out_, "# slurm job %s\n", run.slurm->at("job_id").c_str());
  std::fflush(out_);
}

void TableReport::begin_block(const Block& block) {
  block_ = nullptr;
  rows_.clear();
  p2p_.reset();
  ddp_ = nullptr;
  if (const auto* p = std::get_if<P2pBlock>(&block)) {
    p2p_.emplace(out_, *p, host_of_rank_);
    return p2p_->begin();
  }
  if (const auto* d = std::get_if<DdpBlock>(&block)) return begin_ddp(*d);
  const CollectiveBlock& b = std::get<CollectiveBlock>(block);
  block_ = &b;
  const Settings& s = b.settings;
  std::string how = std::string(timing_mode_name(s.mode())) + ", ";
  how += s.batch || s.sync == SyncMethod::barrier ? "barrier start, " : "clock start, ";
  how += s.adaptive() ? "adaptive " + std::to_string(s.iters) + ".." + std::to_string(s.max_iters) + " iters"
                      : std::to_string(s.iters) + (s.batch ? " ops per batch" : " iters");
  how += " + " + std::to_string(s.warmup) + " warm-up; time = p50 of the max over ranks";
  if (s.cache_cold) how += "; cold cache (each call on the next buffer set of a pool > the LLC)";
  std::fprintf(out_, "#\n# %s  %s%s%s  %s\n#   %s\n", std::string(op_name(b.op)).c_str(),
               std::string(dtype_name(b.dtype)).c_str(), b.redop ? "  " : "",
               b.redop ? std::string(redop_name(*b.redop)).c_str() : "", b.in_place ? "in-place" : "out-of-place",
               how.c_str());
  streaming_ = b.algos.size() <= static_cast<std::size_t>(algos_per_table(width_));
  if (streaming_) print_column_header(0, b.algos.size());
  std::fflush(out_);
}

void TableReport::begin_ddp(const DdpBlock& d) {
  ddp_ = &d;
  const Settings& s = d.settings;
  std::fprintf(out_, "#\n# workload ddp  model %s (%s): %lld parameters in %zu tensors, %.1f MiB of gradients, redop %s\n",
               d.model.name.c_str(), d.model.source.c_str(), static_cast<long long>(d.model.count()), d.model.params.size(),
               static_cast<double>(d.grad_bytes()) / (1 << 20), std::string(redop_name(d.redop)).c_str());
  std::string sizes;
  for (const auto& k : d.buckets) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.2f", sizes.empty() ? "" : " ", static_cast<double>(k.bytes) / (1 << 20));
    sizes += buf;
  }
  std::fprintf(out_, "#   %zu buckets (cap %g MiB, first 1 MiB), MiB in gradient-ready order: %s\n", d.buckets.size(),
               s.bucket_cap_mb, sizes.c_str());
  std::fprintf(out_, "#   %s, %s start, %d steps + %d warm-up; step = every bucket all-reduced back to back, max over ranks\n",
               std::string(timing_mode_name(s.mode())).c_str(), s.sync == SyncMethod::barrier ? "barrier" : "clock",
               s.iters, s.warmup);
  std::fprintf(out_, "#%-21s %12s %12s %12s %8s %6s   %s\n", " algo", "step p50", "p5", "p95", "busbw", "#wrong",
               "bucket p50s (ms, ready order)");
  std::fprintf(out_, "#%-21s %12s %12s %12s %8s %6s\n", "", "(ms)", "(ms)", "(ms)", "(GB/s)", "");
  std::fflush(out_);
}

void TableReport::print_ddp_row(const PointResult& r) const {
  if (r.skipped) {
    std::fprintf(out_, " %-21s skipped: %s\n", r.algo.c_str(), r.skip_reason.value_or("").c_str());
    return;
  }
  std::string buckets;
  for (double us : r.ddp->bucket_p50_us) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.3f", buckets.empty() ? "" : " ", us / 1e3);
    buckets += buf;
  }
  std::fprintf(out_, " %-21s %12.3f %12.3f %12.3f %8.2f ", r.algo.c_str(), r.time_us->p50 / 1e3, r.time_us->p5 / 1e3,
               r.time_us->p95 / 1e3, r.busbw_GBps.value_or(0));
  if (r.checked) std::fprintf(out_, "%6llu", static_cast<unsigned long long>(r.wrong));
  else std::fprintf(out_, "%6s", "N/A");
  std::fprintf(out_, "   %s\n", buckets.c_str());
  std::string chosen;
  for (const auto& k : r.ddp->buckets)
    if (k.chosen) chosen += " " + *k.chosen;
  if (!chosen.empty()) std::fprintf(out_, "#  %s per bucket (ready order):%s\n", r.algo.c_str(), chosen.c_str());
}

void TableReport::print_column_header(std::size_t first, std::size_t n) const {
  std::string names = "#" + std::string(kPrefixWidth - 1, ' ');
  for (std::size_t i = first; i < first + n; ++i) names += "  " + centered(block_->algos[i]->algo, kAlgoWidth - 2);
  std::fprintf(out_, "%s\n", names.c_str());
  std::fprintf(out_, "#%11s %12s %8s %6s %5s", "size", "count", "type", "redop", "root");
  for (std::size_t i = 0; i < n; ++i) std::fprintf(out_, "  %10s %7s %7s %5s %6s", "time", "algbw", "busbw", "eff", "#wrong");
  std::fprintf(out_, "\n#%11s %12s %8s %6s %5s", "(B)", "(elements)", "", "", "");
  for (std::size_t i = 0; i < n; ++i) std::fprintf(out_, "  %10s %7s %7s %5s %6s", "(us)", "(GB/s)", "(GB/s)", "(%)", "");
  std::fprintf(out_, "\n");
}

void TableReport::print_row(const std::vector<PointResult>& row, std::size_t first, std::size_t n) const {
  const PointResult& p = row.front();
  std::fprintf(out_, "%12llu %12llu %8s %6s %5s", static_cast<unsigned long long>(p.bytes),
               static_cast<unsigned long long>(p.count), p.dtype.c_str(), p.redop ? p.redop->c_str() : "none",
               p.root ? std::to_string(*p.root).c_str() : "-");
  for (std::size_t i = first; i < first + n; ++i) {
    const PointResult& r = row[i];
    if (r.skipped) {
      std::fprintf(out_, "  %10s %7s %7s %5s %6s", "skip", "-", "-", "-", "-");
      continue;
    }
    const double t = r.time_us->p50;
    std::fprintf(out_, t < 1e6 ? "  %10.2f" : "  %10.0f", t);
    std::fprintf(out_, " %7.2f %7.2f", *r.algbw_GBps, *r.busbw_GBps);
    // efficiency: the point's necessary data movement on its links / time, as a percentage
    if (r.efficiency) std::fprintf(out_, " %5.0f", *r.efficiency * 100);
    else std::fprintf(out_, " %5s", "-");
    if (r.checked) std::fprintf(out_, " %6llu", static_cast<unsigned long long>(r.wrong));
    else std::fprintf(out_, " %6s", "N/A");
  }
  std::fprintf(out_, "\n");
}

void TableReport::print_skips(std::size_t first, std::size_t n) const {
  // (algo, reason) -> sizes, so a reason shared by a whole range is printed once.
  std::map<std::pair<std::string, std::string>, std::vector<std::uint64_t>> skips;
  for (const auto& row : rows_)
    for (std::size_t i = first; i < first + n; ++i)
      if (row[i].skipped) skips[{row[i].algo, row[i].skip_reason.value_or("")}].push_back(row[i].bytes);
  for (const auto& [key, sizes] : skips)
    std::fprintf(out_, "#  skip %s (%zu size%s, %llu..%llu B): %s\n", key.first.c_str(), sizes.size(),
                 sizes.size() == 1 ? "" : "s", static_cast<unsigned long long>(sizes.front()),
                 static_cast<unsigned long long>(sizes.back()), key.second.c_str());
}

void TableReport::add_row(const std::vector<PointResult>& row) {
  rows_.push_back(row);
  for (const auto& r : row) {
    ++points_;
    if (r.skipped) {
      ++skipped_points_;
      continue;
    }
    ++measured_;
    busbw_sum_ += *r.busbw_GBps;
    wrong_elems_ += r.wrong;
    if (r.wrong > 0) ++wrong_points_;
  }
  if (p2p_) return p2p_->add_row(row);
  if (ddp_) {
    for (const auto& r : row) print_ddp_row(r);
    std::fflush(out_);
    return;
  }
  if (streaming_) {
    print_row(row, 0, row.size());
    std::fflush(out_);
  }
}

void TableReport::end_block() {
  if (p2p_) return p2p_->end();
  if (ddp_) return;
  const std::size_t n = block_->algos.size(), per = static_cast<std::size_t>(algos_per_table(width_));
  for (std::size_t first = 0; first < n; first += per) {
    const std::size_t k = std::min(per, n - first);
    if (!streaming_) {
      if (first > 0) std::fprintf(out_, "#\n");
      print_column_header(first, k);
      for (const auto& row : rows_) print_row(row, first, k);
    }
    print_skips(first, k);
  }
  std::fflush(out_);
}

void TableReport::footer() {
  std::fprintf(out_, "#\n# Out of bounds values : %llu %s\n", static_cast<unsigned long long>(wrong_elems_),
               wrong_elems_ == 0 ? "OK" : "FAILED");
  std::fprintf(out_, "# Avg bus bandwidth    : %g\n", measured_ ? busbw_sum_ / static_cast<double>(measured_) : 0.0);
  std::fprintf(out_, "# Points               : %ld (%ld measured, %ld skipped, %ld with wrong results)\n#\n", points_,
               measured_, skipped_points_, wrong_points_);
  std::fflush(out_);
}

}  // namespace collbench
