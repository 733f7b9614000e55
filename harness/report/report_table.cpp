#include "harness/report/report_table.hpp"

#include "collectives/backends/backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "harness/exit_status.hpp"
#include "harness/report/ranking.hpp"
#include "harness/report/text.hpp"
#include "harness/runtime/provenance.hpp"

namespace collbench {
namespace {

// Column widths: nccl-tests' (size 12, count 12, type 8, redop 6, root 6; time 10, algbw and
// busbw 7, #wrong 6), eff 5, and two marker characters after the time.
constexpr int kPrefixFull = 12 + 1 + 12 + 1 + 8 + 1 + 6 + 1 + 5;
constexpr int kPrefixSmall = 12;  // compact forms: the size only (the block header names the rest)
constexpr int kTime = 10, kMarks = 2, kBw = 7, kEff = 5, kWrong = 6;
constexpr const char* kTie = "\u2248";  // ≈, one column wide

int group_width(TableReport::Form f, bool eff) {
  const int time = 1 + kTime + kMarks;
  if (f == TableReport::Form::narrow) return time;
  if (f == TableReport::Form::compact) return time + 1 + kBw;
  return time + 2 * (1 + kBw) + (eff ? 1 + kEff : 0) + 1 + kWrong;
}

int prefix_width(TableReport::Form f) { return f == TableReport::Form::full ? kPrefixFull : kPrefixSmall; }

using text::display_width;
using text::pad_right;

// Cut to `width` bytes first: a table's group is never wider than its columns.
std::string centered(std::string s, int width) {
  if (display_width(s) > width) s = s.substr(0, static_cast<std::size_t>(std::max(0, width)));
  return text::centered(s, width);
}

std::string format(const char* fmt, auto... args) {
  char buf[128];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// The best column's cell: the winner, the runner-up's margin, ≈ first when that is a tie.
std::string best_cell(const std::vector<PointResult>& row, std::span<const AlgoEntry* const> algos) {
  std::vector<Candidate> c;
  for (std::size_t i = 0; i < row.size(); ++i)
    c.push_back({row[i].time_us ? &*row[i].time_us : nullptr, i < algos.size() ? algos[i]->traits.simplicity_rank : 0,
                 row[i].algo});
  const auto rank = rank_times(c);
  if (!rank) return "-";
  std::string s = row[rank->best].algo;
  if (!rank->runner_up) return s;
  const double pct = rank->margin * 100;
  s += pct < 999.5 ? format(" +%.0f%%", pct) : format(" x%.0f", rank->margin + 1);
  return rank->tied ? std::string(kTie) + " " + s : s;
}

// How a run that ended early ended, for the footer.
std::string ended_early(int status) {
  for (int sig : kStopSignals)
    if (status == signal_exit_status(sig))
      return std::string("stopped by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
             "; the rest not measured, the point in progress dropped (exit status " +
             std::to_string(status) + "; --resume completes it)";
  return "ended early with exit status " + std::to_string(status) + " (stderr says why); the rest was not measured";
}

}  // namespace

int terminal_width() {
  if (const char* c = std::getenv("COLUMNS")) {
    const int w = std::atoi(c);
    if (w >= 40 && w <= 1000) return w;
  }
  return 132;
}

TableReport::Form TableReport::form_for(int width, std::size_t groups, bool eff_column) {
  for (Form f : {Form::full, Form::compact})
    if (prefix_width(f) + static_cast<int>(groups) * group_width(f, eff_column) <= width) return f;
  return Form::narrow;
}

TableReport::TableReport(std::FILE* out, int width) : out_(out), width_(width) {}

void TableReport::header(const RunRecord& run) {
  const Topology& t = run.topology;
  host_of_rank_ = t.host_of_rank;
  std::fprintf(out_, "# collbench %s (git %s)  run %s  %s\n", run.versions.collbench.c_str(),
               run.versions.git_commit.c_str(), run.run_id.c_str(), run.start_time.c_str());
  // The backend's library, under the backend's own name: its first version key ("mpi", "gloo", "nccl").
  if (const BackendInfo* b = Backends::get().find(run.backend); b && !b->version_keys.empty())
    if (const std::string lib = run.versions.fact(b->version_keys.front()); !lib.empty())
      std::fprintf(out_, "# %s: %s\n", b->name.c_str(), lib.c_str());
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
  if (const auto& la = run.loadavg) {  // docs/records.md "run record": loadavg
    const double worst = std::max((*la)[0], (*la)[1]);  // the 15-min average lags a load that just started
    std::fprintf(out_, "# load %.2f %.2f %.2f (1, 5, 15 min) on %d online CPUs%s\n", (*la)[0], (*la)[1], (*la)[2],
                 run.online_cpus,
                 run.online_cpus > 0 && worst > run.online_cpus ? ": above the CPUs, timings include waits for a CPU"
                                                                  : "");
  }
  if (const auto& l = run.links) {  // what the eff column is judged against (docs/measurement.md "Efficiency")
    std::string text;
    double worst_spread = 0;
    for (const auto& [name, rate] : {std::pair{"intra", &l->intra}, std::pair{"inter", &l->inter}}) {
      if (!*rate) continue;
      text += format("%s %.2f GB/s (ranks %d-%d", name, (*rate)->GBps, (*rate)->src, (*rate)->dst);
      if ((*rate)->samples > 0) text += format("; p50 %.0f %% slower", (*rate)->spread * 100);
      if (!(*rate)->reused_from.empty()) text += "; from " + (*rate)->reused_from;
      text += "), ";
      worst_spread = std::max(worst_spread, (*rate)->spread);
    }
    if (!text.empty()) {
      std::fprintf(out_, "# links: %sosu_bw %llu KiB, fastest of %d\n", text.c_str(),
                   static_cast<unsigned long long>((l->intra ? l->intra->bytes : l->inter->bytes) >> 10),
                   (l->intra ? l->intra->samples : l->inter->samples));
      eff_ = worst_spread <= kTightLinkSpread;
      if (!eff_)
        std::fprintf(out_, "# eff: not shown: the link samples' p50 is %.0f %% over the fastest (> %.0f %%: no steady "
                           "yardstick; JSON efficiency kept)\n",
                     worst_spread * 100, kTightLinkSpread * 100);
    }
  }
  if (run.slurm && run.slurm->count("job_id"))
    std::fprintf(out_, "# slurm job %s\n", run.slurm->at("job_id").c_str());
  std::fflush(out_);
}

void TableReport::begin_table(std::span<const Block> blocks) {
  blocks_.clear();
  pending_.clear();
  skips_.clear();
  p2p_.reset();
  ddp_ = nullptr;
  const Block& first = blocks.front();
  if (const auto* p = std::get_if<P2pBlock>(&first)) {
    p2p_.emplace(out_, *p, host_of_rank_);
    return p2p_->begin();
  }
  if (const auto* d = std::get_if<DdpBlock>(&first)) return begin_ddp(*d);
  std::vector<const CollectiveBlock*> cbs;
  for (const Block& b : blocks) cbs.push_back(&std::get<CollectiveBlock>(b));
  begin_collective(cbs);
}

void TableReport::begin_collective(std::span<const CollectiveBlock* const> blocks) {
  blocks_.assign(blocks.begin(), blocks.end());
  const CollectiveBlock& b = *blocks_.front();
  const Settings& s = b.settings;
  std::string how = std::string(timing_mode_name(s.mode())) + ", ";
  how += s.batch || s.sync == SyncMethod::barrier ? "barrier start, " : "clock start (long calls: barrier), ";
  how += s.adaptive() ? "adaptive " + std::to_string(s.iters) + ".." + std::to_string(s.max_iters) + " iters"
                      : std::to_string(s.iters) + (s.batch ? " ops per batch" : " iters");
  how += " + " + std::to_string(s.warmup) + " warm-up; time = p50 of max over ranks";
  if (s.cache_cold) how += "; cold cache (each call on the next buffer set of a pool > the LLC)";
  std::string placement = b.in_place ? "in-place" : "out-of-place";
  if (blocks_.size() > 1) placement = "out-of-place | in-place";
  std::fprintf(out_, "#\n# %s  %s%s%s  %s\n#   %s\n", std::string(op_name(b.op)).c_str(),
               std::string(dtype_name(b.dtype)).c_str(), b.redop ? "  " : "",
               b.redop ? std::string(redop_name(*b.redop)).c_str() : "", placement.c_str(), how.c_str());
  best_ = b.algos.size() > 1;
  std::size_t longest = 0;
  for (const AlgoEntry* a : b.algos) longest = std::max(longest, a->algo.size());
  best_width_ = best_ ? std::max<std::size_t>(longest + 2 + 6, 4) : 0;  // "≈ " + name + " +999%"
  const std::size_t groups = blocks_.size() * b.algos.size();
  const int bests = best_ ? static_cast<int>(blocks_.size() * (2 + best_width_)) : 0;
  form_ = form_for(width_ - bests, groups, eff_);
  best_seen_ = best_seen_ || best_;
  if (form_ == Form::narrow &&
      prefix_width(form_) + static_cast<int>(groups) * group_width(form_, eff_) + bests > width_)
    std::fprintf(out_, "#   %zu column groups: time only, still wider than %d columns (--algo fewer, or COLUMNS)\n",
                 groups, width_);
  print_column_header();
  std::fflush(out_);
}

void TableReport::print_column_header() const {
  const std::size_t algos = blocks_.front()->algos.size();
  const int gw = group_width(form_, eff_);
  const int placement_width = static_cast<int>(algos) * gw + (best_ ? 2 + static_cast<int>(best_width_) : 0);
  std::string line = "#" + std::string(static_cast<std::size_t>(prefix_width(form_) - 1), ' ');
  if (blocks_.size() > 1) {  // a placement line above the algorithms, as nccl-tests' out-of-place / in-place
    std::string p = line;
    for (const auto* b : blocks_) p += centered(b->in_place ? "in-place" : "out-of-place", placement_width);
    while (!p.empty() && p.back() == ' ') p.pop_back();
    std::fprintf(out_, "%s\n", p.c_str());
  }
  std::string names = line, cols = line, units = line;
  if (form_ == Form::full) {
    cols = format("#%11s %12s %8s %6s %5s", "size", "count", "type", "redop", "root");
    units = format("#%11s %12s %8s %6s %5s", "(B)", "(elements)", "", "", "");
  } else {
    cols = format("#%11s", "size");
    units = format("#%11s", "(B)");
  }
  for (const auto* b : blocks_) {
    for (const AlgoEntry* a : b->algos) {
      names += centered(a->algo, gw);
      cols += format(" %*s%*s", kTime, "time", kMarks, "");
      units += format(" %*s%*s", kTime, "(us)", kMarks, "");
      if (form_ == Form::narrow) continue;
      if (form_ == Form::full) {
        cols += format(" %*s", kBw, "algbw");
        units += format(" %*s", kBw, "(GB/s)");
      }
      cols += format(" %*s", kBw, "busbw");
      units += format(" %*s", kBw, "(GB/s)");
      if (form_ != Form::full) continue;
      if (eff_) {
        cols += format(" %*s", kEff, "eff");
        units += format(" %*s", kEff, "(%)");
      }
      cols += format(" %*s", kWrong, "#wrong");
      units += format(" %*s", kWrong, "");
    }
    if (best_) {
      names += "  " + std::string(best_width_, ' ');
      cols += "  " + pad_right("best", static_cast<int>(best_width_));
      units += "  " + std::string(best_width_, ' ');
    }
  }
  for (std::string* l : {&names, &cols, &units}) {
    while (!l->empty() && l->back() == ' ') l->pop_back();
    std::fprintf(out_, "%s\n", l->c_str());
  }
}

void TableReport::count(const PointResult& r) {
  ++points_;
  if (r.skipped) {
    ++skipped_points_;
    return;
  }
  ++measured_;
  if (!r.checked) ++unchecked_;
  wrong_elems_ += r.wrong;
  if (r.wrong > 0) ++wrong_points_;
  if (r.busbw_GBps && !(r.op == kPingpongOp && r.algo == "latency")) {  // a latency test has no bandwidth to average
    auto& [sum, n] = busbw_[r.op + "/" + r.algo];
    sum += *r.busbw_GBps;
    ++n;
  }
  if (r.time_us && r.op != kPingpongOp && !r.ddp) {
    noisy_ += wide_spread(*r.time_us);
    fell_back_ += r.sync_fallback && !r.sync_planned;  // a long op's planned barrier start is no failure
  }
}

void TableReport::add_row(const std::vector<PointResult>& row) {
  for (const auto& r : row) count(r);
  if (p2p_) return p2p_->add_row(row);
  if (ddp_) {
    for (const auto& r : row) print_ddp_row(r);
    std::fflush(out_);
    return;
  }
  pending_.push_back(row);
  if (pending_.size() < blocks_.size()) return;
  print_row(pending_);
  pending_.clear();
}

void TableReport::print_row(const std::vector<std::vector<PointResult>>& rows) {
  const PointResult& p = rows.front().front();
  std::string line = format("%12llu", static_cast<unsigned long long>(p.bytes));
  if (form_ == Form::full)
    line += format(" %12llu %8s %6s %5s", static_cast<unsigned long long>(p.count), p.dtype.c_str(),
                   p.redop ? p.redop->c_str() : "none", p.root ? std::to_string(*p.root).c_str() : "-");
  const std::size_t algos = blocks_.front()->algos.size();
  for (std::size_t k = 0; k < blocks_.size(); ++k) {
    const std::vector<PointResult>* row = k < rows.size() ? &rows[k] : nullptr;  // absent: stopped before it
    for (std::size_t i = 0; i < algos; ++i) {
      const PointResult* r = row ? &(*row)[i] : nullptr;
      const bool measured = r && !r->skipped && r->time_us;
      const char* blank = !r ? "" : "-";
      if (measured) {
        const double t = r->time_us->p50;
        line += format(t < 1e6 ? " %*.2f" : " %*.0f", kTime, t);
        line += wide_spread(*r->time_us) ? '~' : ' ';
        line += r->sync_fallback && !r->sync_planned ? '^' : ' ';
      } else {
        line += format(" %*s%*s", kTime, r ? "skip" : "", kMarks, "");
      }
      if (form_ == Form::narrow) continue;
      if (form_ == Form::full) line += measured ? format(" %*.2f", kBw, *r->algbw_GBps) : format(" %*s", kBw, blank);
      line += measured ? format(" %*.2f", kBw, *r->busbw_GBps) : format(" %*s", kBw, blank);
      if (form_ != Form::full) continue;
      if (eff_)  // the point's necessary data movement on its links / time, as a percentage
        line += measured && r->efficiency ? format(" %*.0f", kEff, *r->efficiency * 100) : format(" %*s", kEff, blank);
      if (measured && r->checked) line += format(" %*llu", kWrong, static_cast<unsigned long long>(r->wrong));
      else line += format(" %*s", kWrong, measured ? "N/A" : blank);
    }
    if (best_) line += "  " + pad_right(row ? best_cell(*row, blocks_[k]->algos) : "", static_cast<int>(best_width_));
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
  for (const auto& row : rows)
    for (const auto& r : row)
      if (r.skipped) skips_[{r.algo, r.skip_reason.value_or("")}].insert(r.bytes);
}

void TableReport::print_pending() {
  if (!pending_.empty() && !blocks_.empty()) print_row(pending_);
  pending_.clear();
}

void TableReport::print_skips() const {
  for (const auto& [key, sizes] : skips_)
    std::fprintf(out_, "#  skip %s (%zu size%s, %llu..%llu B): %s\n", key.first.c_str(), sizes.size(),
                 sizes.size() == 1 ? "" : "s", static_cast<unsigned long long>(*sizes.begin()),
                 static_cast<unsigned long long>(*sizes.rbegin()), key.second.c_str());
}

void TableReport::end_table() {
  if (p2p_) return p2p_->end();
  if (ddp_ || blocks_.empty()) return;
  print_pending();
  print_skips();
  blocks_.clear();
  skips_.clear();
  std::fflush(out_);
}

void TableReport::begin_ddp(const DdpBlock& d) {
  ddp_ = &d;
  const Settings& s = d.settings;
  std::fprintf(out_, "#\n# workload ddp  model %s (%s): %lld parameters in %zu tensors, %.1f MiB of gradients, redop %s\n",
               d.model.name.c_str(), d.model.source.c_str(), static_cast<long long>(d.model.count()), d.model.params.size(),
               static_cast<double>(d.grad_bytes()) / (1 << 20), std::string(redop_name(d.redop)).c_str());
  std::string sizes;
  for (const auto& k : d.buckets)
    sizes += format("%s%.2f", sizes.empty() ? "" : " ", static_cast<double>(k.bytes) / (1 << 20));
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
  for (double us : r.ddp->bucket_p50_us) buckets += format("%s%.3f", buckets.empty() ? "" : " ", us / 1e3);
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

void TableReport::footer(int exit_status) {
  if (exit_status != 0) end_table();  // what the stopped table holds, a half-done size included
  const auto checked = static_cast<unsigned long long>(measured_ - unchecked_);
  std::string bounds;
  if (measured_ > 0 && unchecked_ == measured_) bounds = "not checked (-c 0)";
  else bounds = std::to_string(wrong_elems_) + (wrong_elems_ == 0 ? " OK" : " FAILED");
  if (unchecked_ > 0 && unchecked_ < measured_)
    bounds += " (" + std::to_string(checked) + " points checked, " + std::to_string(unchecked_) + " not: -c 0)";
  std::fprintf(out_, "#\n# Out of bounds values : %s\n", bounds.c_str());
  // Per (op, algo): an average over algorithms, or over latency and bandwidth, means nothing.
  bool first = true;
  for (const auto& [key, v] : busbw_) {
    std::fprintf(out_, first ? "# %-21s: %-8g %s (GB/s, mean over %ld point%s)\n" : "# %-21s  %-8g %s (GB/s, mean over %ld point%s)\n",
                 first ? "Avg bus bandwidth" : "",
                 v.first / static_cast<double>(v.second), key.c_str(), v.second, v.second == 1 ? "" : "s");
    first = false;
  }
  std::fprintf(out_, "# Points               : %ld (%ld measured, %ld skipped, %ld with wrong results)\n", points_,
               measured_, skipped_points_, wrong_points_);
  if (noisy_)
    std::fprintf(out_, "# ~ after a time       : p95 - p5 over %.0f %% of the p50 (%ld point%s; samples_us in the JSON)\n",
                 kWideSpread * 100, noisy_, noisy_ == 1 ? "" : "s");
  if (fell_back_)
    std::fprintf(out_, "# ^ after a time       : clock start fell back to a barrier (%ld point%s; JSON sync_fallback)\n",
                 fell_back_, fell_back_ == 1 ? "" : "s");
  if (best_seen_)
    std::fprintf(out_, "# best                 : lowest p50; +N%%: next slower's p50 over it; %s: within best's p95 (tie)\n",
                 kTie);
  if (exit_status != 0) std::fprintf(out_, "# Run ended early      : %s\n", ended_early(exit_status).c_str());
  std::fprintf(out_, "#\n");
  std::fflush(out_);
}

}  // namespace collbench
