#include "harness/app/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <span>

#include "collectives/core/error.hpp"
#include "harness/exit_status.hpp"
#include "harness/measure/collective_point.hpp"
#include "harness/measure/measure.hpp"
#include "harness/measure/p2p_point.hpp"
#include "harness/plan/plan.hpp"
#include "harness/plan/sizes.hpp"
#include "harness/report/report_json.hpp"
#include "harness/report/gate.hpp"
#include "harness/results/links_file.hpp"
#include "harness/report/report_table.hpp"
#include "harness/results/resume.hpp"
#include "harness/measure/resuming.hpp"
#include "harness/runtime/cache_pool.hpp"
#include "harness/runtime/control.hpp"
#include "harness/runtime/fault.hpp"
#include "harness/runtime/last_words.hpp"
#include "harness/runtime/memcheck.hpp"
#include "harness/runtime/provenance.hpp"
#include "harness/runtime/signals.hpp"
#include "harness/runtime/watchdog.hpp"
#include "harness/workload/text_file.hpp"

namespace collbench {
namespace {

const char* getenv_or_null(const char* name) { return std::getenv(name); }

// --cache cold's pools exceed the largest last-level cache of any rank, so every rank makes the
// same pool (registered buffers need that) and none of them stays in cache; source: rank 0's.
LastLevelCache agreed_llc(Control& control) {
  LastLevelCache mine = last_level_cache();
  std::vector<double> bytes{static_cast<double>(mine.bytes)};
  control.max_in_place(bytes);
  return {static_cast<std::uint64_t>(bytes.front()), control.broadcast(mine.source)};
}

// Refuses a sweep whose largest point cannot fit in memory, before anything runs.
void check_memory_upfront(Control& control, const std::vector<Block>& plan, const Topology& topo, bool device,
                          std::uint64_t llc_bytes) {
  const auto problem =
      plan_memory_problem(plan, topo.world_size, topo.ranks_on_my_node, available_host_memory(), device, llc_bytes);
  if (auto why = control.agree_error(problem)) throw UsageError(*why);
}

// A killed run can leave a truncated last line; appending after it would bury it mid-file.
void warn_dropped_tail(const std::string& path, std::uint64_t removed) {
  if (removed)
    std::fprintf(stderr, "collbench: warning: %s: removed a truncated last line (%llu bytes, not a record) before appending\n",
                 path.c_str(), static_cast<unsigned long long>(removed));
}

// Everything rank 0 writes: the JSON Lines file and the table. Other ranks hold none.
//
// A helper thread may end the run first (a signal: at once; the watchdog: before its _exit),
// through the last words: they write the `end` record and the table's footer and close both,
// under the same mutex as every write, so a point finished after them is dropped, never
// written after the `end` record.
//
// A failed write of the results file (disk full, I/O error) leaves no partial record
// (JsonlWriter) and is remembered, not thrown: the sweep stops at the next point boundary,
// agreed by all ranks, and exits ExitStatus::write_failed, so every rank ends cleanly and the file
// keeps the complete records written before (--resume continues from them).
class Reports {
 public:
  Reports(const RunConfig& cfg, Control& control, LastWords& last_words)
      : last_words_(last_words), keep_samples_(cfg.keep_samples),
        quiet_(cfg.quiet),
        rank0_(control.rank() == 0),
        expect_(cfg.expect ? &*cfg.expect : nullptr) {
    std::optional<std::string> failure;
    if (control.rank() == 0 && cfg.json_path) {
      try {
        if (!cfg.overwrite) {
          // Appending to a file that is not ours, or is corrupt before its last line, would
          // bury the damage under new records: refuse, naming the line.
          if (auto bad = foreign_line(*cfg.json_path))
            throw UsageError("--json " + *bad +
                             "; accepted: a collbench/1 results file (repair or move it), or --overwrite");
          warn_dropped_tail(*cfg.json_path, drop_truncated_tail(*cfg.json_path));
        }
        json_.emplace(*cfg.json_path, cfg.overwrite);
      } catch (const UsageError& e) {
        failure = e.what();
      }
    }
    if (auto why = control.agree_error(failure)) throw UsageError(*why);
    if (control.rank() == 0 && !cfg.quiet) table_.emplace(stdout, terminal_width());
  }
  // A run that fails before its first record leaves no empty file it created.
  ~Reports() {
    if (rank0_) last_words_.clear();  // the process's words are rank 0's (threads share them)
    if (json_) json_->discard_if_unused();
  }
  Reports(const Reports&) = delete;
  Reports& operator=(const Reports&) = delete;

  void start(const RunRecord& run) {
    run_id_ = run.run_id;
    if (expect_ && rank0_) {
      TunedLayout layout{std::vector<int>(static_cast<std::size_t>(run.topology.nodes), 0)};
      for (int node : run.topology.node_of_rank) ++layout.ranks_per_node.at(static_cast<std::size_t>(node));
      gate_.emplace(*expect_, std::move(layout));
    }
    std::lock_guard lock(mutex_);
    write(run_json(run));
    // From here on, a rank 0 that a helper thread ends (a signal, the watchdog) still writes the
    // end record and the footer: the points so far, and how the run ended.
    if (json_ || table_)
      last_words_.set([this](int status) {
        std::lock_guard lock(mutex_);
        end_.peak_rss_bytes = peak_resident_bytes();  // the others' peaks need MPI: rank 0's own
        write_end(status);
        if (table_) table_->footer(status);
        closed_ = true;
      });
    if (table_) table_->header(run);
  }
  void begin_table(std::span<const Block> blocks) {
    std::lock_guard lock(mutex_);
    if (table_ && !closed_) table_->begin_table(blocks);
  }
  void add(const std::vector<PointResult>& row) {
    std::lock_guard lock(mutex_);
    if (closed_) return;  // finished after the last words: not among the points the end record counts
    for (const auto& r : row) {
      if (r.resumed) continue;  // recorded by an earlier run
      ++end_.points;
      if (r.skipped) ++end_.skipped_points;
      if (r.wrong > 0) ++end_.wrong_points;
      if (gate_) {
        gate_->add(r);
        end_.expect = EndRecord::Expect{gate_->path(), gate_->checked(), gate_->failed()};
      }
      write(result_json(r, run_id_, keep_samples_));
    }
    if (table_) table_->add_row(row);
  }
  void end_table() {
    std::lock_guard lock(mutex_);
    if (table_ && !closed_) table_->end_table();
  }
  // The results file could not be written (rank 0 only; the sweep agrees on it).
  bool lost() const { return lost_; }
  // `signal`: the sweep was stopped by this signal (exit status signal_exit_status(signal)). `peak_rss`: the
  // largest peak resident memory of any rank.
  int finish(std::uint64_t peak_rss, int signal = 0) {
    if (rank0_) last_words_.clear();
    std::lock_guard lock(mutex_);
    end_.peak_rss_bytes = peak_rss;
    int status = signal ? signal_exit_status(signal)
                        : code(end_.wrong_points > 0 ? ExitStatus::wrong_results : ExitStatus::ok);
    if (gate_) {
      end_.expect = EndRecord::Expect{gate_->path(), gate_->checked(), gate_->failed()};
      if (status == code(ExitStatus::ok) && gate_->failed() > 0) status = code(ExitStatus::below_expectation);
    }
    if (closed_) return lost_ ? code(ExitStatus::write_failed) : status;  // the last words ended the file and the table
    if (!lost_) write_end(status);
    if (table_) table_->footer(signal ? status : 0);
    closed_ = true;
    if (gate_) {
      if (!quiet_) gate_->print(stdout);
      if (gate_->failed() > 0) {
        std::fprintf(stderr, "collbench: %ld of %ld expectation checks below the reference (--expect %s): %s\n",
                     gate_->failed(), gate_->checked(), gate_->path().c_str(), gate_->failures().c_str());
        std::fflush(stderr);
      }
    }
    return lost_ ? code(ExitStatus::write_failed) : status;
  }

 private:
  void write(const nlohmann::ordered_json& record) {
    if (!json_ || lost_) return;
    try {
      json_->write(record);
    } catch (const ResultsWriteError& e) {
      lost_ = true;
      std::fprintf(stderr, "collbench: error: %s\n", e.what());
      std::fflush(stderr);
    }
  }
  void write_end(int status) {  // under mutex_
    EndRecord e = end_;
    e.run_id = run_id_;
    e.end_time = utc_now_iso8601();
    e.loadavg = local_loadavg();  // rank 0's node, as the run record's
    e.exit_status = status;
    write(end_json(e));
  }

  LastWords& last_words_;
  std::optional<JsonlWriter> json_;
  std::optional<TableReport> table_;
  std::string run_id_;
  std::mutex mutex_;  // every write and end_: a helper thread's last words write too
  bool closed_ = false;  // the end record and footer are written: nothing more
  long keep_samples_ = 0;
  bool quiet_ = false;
  bool rank0_ = false;
  const Expectations* expect_;  // --expect, or null
  std::optional<Gate> gate_;    // rank 0 with --expect: the checks so far
  EndRecord end_;
  std::atomic<bool> lost_{false};  // read by the sweep unlocked (lost()); written under mutex_
};

// The longest --timeout of the plan: bounds the control plane's calls before the first point.
// --algo auto: rank 0 reads the tuning file and every rank parses the bytes it broadcasts, so
// differing copies on the nodes cannot make ranks choose differently. Bad file: UsageError on
// every rank, before any output.
std::optional<AutoAlgos> load_tuning(const RunConfig& cfg, const std::vector<Block>& plan, Control& control,
                                     const Topology& topo) {
  if (!has_auto(plan)) return std::nullopt;
  const std::string& path = *cfg.tuning_path;
  std::string text;  // "T" + the file, or "E" + why rank 0 could not read it
  if (control.rank() == 0) try {
      text = "T" + read_tuning_file(path);
    } catch (const UsageError& e) {
      text = "E" + std::string(e.what());
    }
  text = control.broadcast(text);
  if (text.empty() || text[0] != 'T') throw UsageError(text.empty() ? "--tuning: nothing received" : text.substr(1));
  TunedLayout layout{std::vector<int>(static_cast<std::size_t>(topo.nodes), 0)};
  for (int node : topo.node_of_rank) ++layout.ranks_per_node.at(static_cast<std::size_t>(node));
  return AutoAlgos(Tuning::parse(text.substr(1), path), Registry::get(), cfg.backend, cfg.device, std::move(layout));
}

// --links FILE: rank 0 reads it (absent: nothing known yet) and every rank parses the bytes it
// broadcasts, so all reuse the same rates; a bad file is a UsageError on every rank.
std::optional<LinksFile> load_links(const RunConfig& cfg, Control& control) {
  if (!cfg.links_path) return std::nullopt;
  std::string text;  // "T" + the file, "N" none yet, or "E" + why rank 0 could not read it
  if (control.rank() == 0) {
    std::error_code ec;
    if (!std::filesystem::exists(*cfg.links_path, ec)) text = "N";
    else try {
        text = "T" + workload::read_text_file(*cfg.links_path, "--links");
      } catch (const UsageError& e) {
        text = "E" + std::string(e.what()) + "; accepted: a readable file";
      }
  }
  text = control.broadcast(text);
  if (text == "N") return LinksFile{};
  if (text.empty() || text[0] != 'T') throw UsageError(text.empty() ? "--links: nothing received" : text.substr(1));
  return parse_links_file(text.substr(1), *cfg.links_path);
}

// Rank 0 adds the rates this run measured to the --links file (written whole, then renamed
// over it, so a reader never sees half a file). A file it cannot write stops every rank.
void save_links(const RunConfig& cfg, Control& control, LinksFile file, const LinkRates& rates,
                const std::string& run_id, const std::string& backend, const std::string& device) {
  std::optional<std::string> failure;
  if (control.rank() == 0) {
    if (file.backend != backend || file.device != device) file = LinksFile{backend, device, {}};  // another yardstick
    for (const auto& [name, rate] : {std::pair{"intra", &rates.intra}, std::pair{"inter", &rates.inter}})
      if (*rate && (*rate)->reused_from.empty()) record_rate(file, name, **rate, run_id);
    const std::string tmp = *cfg.links_path + ".tmp";
    std::ofstream out(tmp, std::ios::trunc);
    out << format_links_file(file);
    out.close();
    std::error_code ec;
    if (!out) failure = "--links " + *cfg.links_path + ": cannot write it; accepted: a writable path";
    else std::filesystem::rename(tmp, *cfg.links_path, ec);
    if (ec) failure = "--links " + *cfg.links_path + ": " + ec.message() + "; accepted: a writable path";
  }
  if (auto why = control.agree_error(failure)) throw UsageError(*why);
}

std::chrono::milliseconds longest_timeout(const std::vector<Block>& plan) {
  double s = 0;
  for (const Block& b : plan) std::visit([&](const auto& block) { s = std::max(s, block.settings.timeout_s); }, b);
  return s > 0 ? std::chrono::milliseconds(static_cast<long long>(s * 1000)) : CallScope::kDefaultTimeout;
}

bool has_collectives(const std::vector<Block>& plan) {
  return std::any_of(plan.begin(), plan.end(), [](const Block& b) { return std::holds_alternative<CollectiveBlock>(b); });
}

}  // namespace

namespace {

// The rank's measured side from its backend's factory, placed on its node (topology).
std::unique_ptr<Backend> make_backend(const RunConfig& cfg, Control& control, const Topology& topo,
                                      std::shared_ptr<CallScope> scope) {
  const BackendInfo& info = Backends::get().check(cfg.backend, cfg.device);
  const int me = control.rank();
  const int node = topo.node_of_rank.at(static_cast<std::size_t>(me));
  int local_rank = 0, local_size = 0;
  for (int r = 0; r < topo.world_size; ++r) {
    if (topo.node_of_rank[static_cast<std::size_t>(r)] != node) continue;
    if (r < me) ++local_rank;
    ++local_size;
  }
  BackendContext ctx{control.world(), cfg.device, std::move(scope), local_rank, local_size,
                     topo.host_of_rank.at(static_cast<std::size_t>(me)), topo.node_of_rank};
  return info.make(ctx);
}

// --ranks under a launcher: the launcher decides; a different count is a mistake.
void check_ranks(const RunConfig& cfg, int world_size) {
  if (cfg.ranks && *cfg.ranks != world_size)
    throw UsageError("--ranks " + std::to_string(*cfg.ranks) + " but the launcher started " + std::to_string(world_size) +
                     " ranks; accepted: --ranks equal to the launcher's count, or no --ranks (--backend thread starts "
                     "its own)");
}

}  // namespace

int run_sweep(const RunConfig& cfg, const LaunchEnv& launch, World& world, ProcessServices& process) {
  const std::vector<Block> plan = make_plan(cfg, Registry::get());
  // One call scope per rank, shared by the control plane and the measured transport, and one
  // watchdog on it from the first collective on: every blocking call collbench makes below
  // (control collectives, clock sync, transport waits, library collectives, NCCL, device
  // synchronisation) is bounded from that thread (watchdog.hpp).
  auto scope = std::make_shared<CallScope>(longest_timeout(plan));
  Control control(world, scope);
  LastWords& last_words = process.last_words;  // rank 0's end record, said by a helper thread that ends the process
  const Watchdog watchdog(scope, control.rank(), &last_words);
  // Checks first, the same on every rank, so a bad run stops before any output exists.
  // The launcher's count is the world's only where the launcher started the ranks (not threads
  // of one process started by one task, e.g. srun -n1 collbench --backend thread).
  Versions vers = versions();
  vers.facts = process.launch_facts;  // the backend's are added once it exists
  if (!Backends::get().check(cfg.backend, cfg.device).ranks_share_process)
    check_world_size(launch, control.size(), vers.fact(kLauncherVersionKey), vers.fact("mpi"));
  check_ranks(cfg, control.size());
  check_plan_for_world(plan, control.size());
  const Topology topo = discover_topology(control);
  std::optional<AutoAlgos> autos = load_tuning(cfg, plan, control, topo);
  const LastLevelCache llc = agreed_llc(control);
  check_memory_upfront(control, plan, topo, cfg.device == "cuda", llc.bytes);
  std::unique_ptr<Backend> backend = make_backend(cfg, control, topo, scope);
  backend->transport().set_node_layout(topo.node_of_rank);      // for node-aware algorithms' splits
  FaultInjector fault(fault_from_env(), backend->transport(), control.rank());  // test-only; bad syntax: exit 2
  Reports reports(cfg, control, last_words);
  backend->describe(vers.facts);

  RunRecord run{control.broadcast(random_run_id()),
                cfg.argv,
                utc_now_iso8601(),
                topo,
                cfg.backend,
                cfg.device,
                vers,
                slurm_info(getenv_or_null),
                &cfg,
                std::nullopt,
                std::nullopt,
                std::nullopt,
                std::nullopt,
                local_loadavg(),
                online_cpus()};
  if (const char* link = getenv_or_null("COLLBENCH_INTER_NODE_LINK"); link != nullptr && *link != '\0')
    run.inter_node_link = link;  // rank 0 writes the record: its environment is what the launcher set
  if (auto skew = test_clock_from_env()) control.clock().set_test_clock(*skew);  // test-only
  run.provenance = gather_provenance(control, topo);
  run.calibration = calibrate(fault.transport(), control);
  if (has_collectives(plan)) {  // what every collective point's efficiency is judged against
    // On the measured transport itself, not the fault injector's wrapper: test faults count
    // the measured points' messages only.
    PointEnv links_env{backend->transport(), control, topo, cfg.backend, cfg.device, true, backend.get()};
    std::optional<LinksFile> known = load_links(cfg, control);
    run.links = calibrate_links(links_env, static_cast<double>(longest_timeout(plan).count()) / 1e3,
                                known ? &*known : nullptr);
    if (known) save_links(cfg, control, *known, *run.links, run.run_id, cfg.backend, cfg.device);
  }
  PointEnv env{fault.transport(), control, topo, cfg.backend, cfg.device, cfg.quiet, backend.get()};
  if (run.links) env.links = &*run.links;
  reports.start(run);
  const ResumeSet done = cfg.resume ? ResumeSet(control, *cfg.json_path, control.rank() == 0) : ResumeSet();

  env.barrier_us = run.calibration->barrier_us;
  env.around_calls = fault.around_calls();  // test-only: null in a normal run
  env.llc_bytes = llc.bytes;
  env.llc_source = llc.source;
  if (autos) env.autos = &*autos;
  long points = 0;
  bool stopped = false;  // a rank got SIGTERM/SIGINT, or rank 0 could not write: the rest is abandoned
  try {
    // Table by table (a collective's placements side by side), size by size, so each size's
    // row is printed as soon as it is done.
    for (const TableRange& t : table_ranges(plan)) {
      const std::span<const Block> blocks(plan.data() + t.first, t.last - t.first);
      reports.begin_table(blocks);
      for (const SizePoint& s : block_sizes(blocks.front(), topo.world_size)) {  // a table's blocks share sizes
        for (const Block& b : blocks) {
          // Agreed: every rank stops at the same point. A rank stalled here is named "between points".
          env.transport.scope().set_phase("between points");
          if ((stopped = control.any(process.stop.requested() || reports.lost()))) break;
          // The block kind's own point runner.
          std::visit([&](const auto& block) { reports.add(measure_size_resuming(env, block, s, done)); }, b);
          fault.after_point(control, ++points);
        }
        if (stopped) break;
      }
      reports.end_table();
      if (stopped) break;
    }
  } catch (const UsageError&) {
    throw;  // found alike on every rank before measuring the point: exit 2, nothing to end
  } catch (...) {
    // This rank failed (a self-timed NCCL timeout, a transport error): main prints the line
    // and aborts the job with 3. Rank 0 first ends the file as its watchdog would (a thread
    // rank's failure reaches rank 0 here too, as its peer's).
    if (control.rank() == 0) last_words.say(code(ExitStatus::rank_failed));
    throw;
  }
  std::vector<double> rss{static_cast<double>(peak_resident_bytes())};
  control.max_in_place(rss);
  const int signal = stopped ? (process.stop.signal() ? process.stop.signal() : SIGTERM) : 0;
  const int status = reports.finish(static_cast<std::uint64_t>(rss.front()), signal);
  // Rank 0's status for every rank (a lost results file is known there only); nobody
  // finalizes while rank 0 still needs the others.
  return control.broadcast(status);
}

}  // namespace collbench
