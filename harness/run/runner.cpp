#include "harness/run/runner.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "collectives/core/error.hpp"
#include "harness/run/backend.hpp"
#include "harness/measure/collective_point.hpp"
#include "harness/measure/measure.hpp"
#include "harness/run/control.hpp"
#include "harness/run/fault.hpp"
#include "harness/run/memcheck.hpp"
#include "harness/measure/p2p_point.hpp"
#include "harness/plan/plan.hpp"
#include "harness/report/report_json.hpp"
#include "harness/report/report_table.hpp"
#include "harness/report/resume.hpp"
#include "harness/run/signals.hpp"
#include "harness/run/watchdog.hpp"
#include "harness/plan/sizes.hpp"

namespace collbench {
namespace {

const char* getenv_or_null(const char* name) { return std::getenv(name); }

std::vector<SizePoint> size_list(const Settings& s, int chunks, DType dtype) {
  return size_points(size_steps(s.min_bytes, s.max_bytes, s.step_factor, s.step_bytes), chunks, dtype_size(dtype));
}
std::vector<SizePoint> sizes_of(const CollectiveBlock& b, int world_size) {
  return size_list(b.settings, size_chunks(b.op, world_size), b.dtype);
}
std::vector<SizePoint> sizes_of(const P2pBlock& b, int) { return size_list(b.settings, 1, DType::uint8); }  // one message of raw bytes

// Refuses a sweep whose largest point cannot fit in memory, before anything runs.
void check_memory_upfront(Control& control, const std::vector<Block>& plan, const Topology& topo) {
  std::optional<std::string> problem;
  const std::uint64_t available = available_host_memory();
  for (const auto& block : plan) {
    const auto* b = std::get_if<CollectiveBlock>(&block);  // pingpong holds at most 64 MiB of window per rank
    if (!b) continue;
    const auto sizes = sizes_of(*b, topo.world_size);
    if (sizes.empty()) continue;
    const SizePoint& big = sizes.back();
    const auto need = point_memory_need(b->op, big.chunk_count, b->dtype, topo.world_size).total();
    if (auto why = memory_shortfall(need, topo.ranks_on_my_node, available)) {
      problem = std::string(op_name(b->op)) + " at " + std::to_string(big.bytes) + " B: " + *why +
                "; accepted: a smaller --max-bytes, or fewer ranks per node";
      break;
    }
  }
  if (auto why = control.agree_error(problem)) throw UsageError(*why);
}

// A killed run can leave a truncated last line; appending after it would bury it mid-file.
void warn_dropped_tail(const std::string& path, std::uint64_t removed) {
  if (removed)
    std::fprintf(stderr, "collbench: warning: %s: removed a truncated last line (%llu bytes, not a record) before appending\n",
                 path.c_str(), static_cast<unsigned long long>(removed));
}

// Everything rank 0 writes: the JSON Lines file and the table. Other ranks hold none.
class Reports {
 public:
  Reports(const RunConfig& cfg, Control& control) : keep_samples_(cfg.keep_samples) {
    std::optional<std::string> failure;
    if (control.rank() == 0 && cfg.json_path) {
      if (!cfg.overwrite) warn_dropped_tail(*cfg.json_path, drop_truncated_tail(*cfg.json_path));
      try {
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
    if (json_) json_->discard_if_unused();
  }
  Reports(const Reports&) = delete;
  Reports& operator=(const Reports&) = delete;

  void start(const RunRecord& run) {
    run_id_ = run.run_id;
    if (json_) json_->write(run_json(run));
    if (table_) table_->header(run);
  }
  void begin_block(const Block& b) {
    if (table_) table_->begin_block(b);
  }
  void add(const std::vector<PointResult>& row) {
    for (const auto& r : row) {
      if (r.resumed) continue;  // recorded by an earlier run
      ++end_.points;
      if (r.skipped) ++end_.skipped_points;
      if (r.wrong > 0) ++end_.wrong_points;
      if (json_) json_->write(result_json(r, run_id_, keep_samples_));
    }
    if (table_) table_->add_row(row);
  }
  void end_block() {
    if (table_) table_->end_block();
  }
  // `signal`: the sweep was stopped by this signal (exit status 128 + signal). `peak_rss`: the
  // largest peak resident memory of any rank.
  int finish(std::uint64_t peak_rss, int signal = 0) {
    end_.run_id = run_id_;
    end_.peak_rss_bytes = peak_rss;
    end_.end_time = utc_now_iso8601();
    end_.exit_status = signal ? 128 + signal : end_.wrong_points > 0 ? 1 : 0;
    if (json_) json_->write(end_json(end_));
    if (table_) table_->footer();
    return end_.exit_status;
  }

 private:
  std::optional<JsonlWriter> json_;
  std::optional<TableReport> table_;
  std::string run_id_;
  long keep_samples_ = 0;
  EndRecord end_;
};

}  // namespace

int run_sweep(const RunConfig& cfg, const LaunchEnv& launch) {
  Control control(MPI_COMM_WORLD);
  const TerminationWatcher stop(kTerminationGrace, control.rank() == 0);
  // Checks first, the same on every rank, so a bad run stops before any output exists.
  check_world_size(launch, control.size());
  const std::vector<Block> plan = make_plan(cfg, Registry::get());
  check_plan_for_world(plan, control.size());
  const Topology topo = discover_topology(control);
  check_memory_upfront(control, plan, topo);
  std::unique_ptr<Backend> backend = make_backend(cfg, MPI_COMM_WORLD);
  FaultInjector fault(fault_from_env(), backend->transport());  // test-only; bad syntax: exit 2
  // Bounds every blocking call of the measured transport from its own thread (watchdog.hpp),
  // so the transport's waits read no clock.
  const Watchdog watchdog(backend->transport().shared_scope(), control.rank());
  Reports reports(cfg, control);
  Versions vers = versions();
  backend->describe(vers);

  RunRecord run{control.broadcast(random_run_id()),
                cfg.argv,
                utc_now_iso8601(),
                topo,
                cfg.backend,
                cfg.device,
                vers,
                slurm_info(getenv_or_null),
                &cfg,
                std::nullopt};
  if (auto skew = test_clock_from_env()) control.clock().set_test_clock(*skew);  // test-only
  run.calibration = calibrate(fault.transport(), control);
  reports.start(run);
  const ResumeSet done = cfg.resume ? ResumeSet(control, *cfg.json_path, control.rank() == 0) : ResumeSet();

  PointEnv env{fault.transport(), control, topo, cfg.backend, cfg.device, cfg.quiet};
  env.delay = fault.delay();  // test-only
  long points = 0;
  bool stopped = false;  // a rank got SIGTERM/SIGINT: the rest of the sweep is abandoned
  for (const Block& b : plan) {
    reports.begin_block(b);
    std::visit(
        [&](const auto& block) {
          for (const SizePoint& s : sizes_of(block, topo.world_size)) {
            if ((stopped = control.any(stop.requested()))) break;  // agreed: every rank stops at the same point
            reports.add(measure_size_resuming(env, block, s, done));  // the block kind's own point runner
            fault.after_point(control, ++points);
          }
        },
        b);
    reports.end_block();
    if (stopped) break;
  }
  std::vector<double> rss{static_cast<double>(peak_resident_bytes())};
  control.max_in_place(rss);
  const int status = reports.finish(static_cast<std::uint64_t>(rss.front()), stopped ? (stop.signal() ? stop.signal() : SIGTERM) : 0);
  control.barrier();  // nobody finalizes while rank 0 still needs the others
  return status;
}

}  // namespace collbench
