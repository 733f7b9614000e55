#include "harness/runner.hpp"

#include <cstdlib>
#include <memory>
#include <optional>

#include "collectives/core/error.hpp"
#include "harness/backend.hpp"
#include "harness/collective_point.hpp"
#include "harness/control.hpp"
#include "harness/memcheck.hpp"
#include "harness/plan.hpp"
#include "harness/report_json.hpp"
#include "harness/report_table.hpp"
#include "harness/sizes.hpp"

namespace collbench {
namespace {

const char* getenv_or_null(const char* name) { return std::getenv(name); }

std::vector<SizePoint> sizes_of(const Block& b, int world_size) {
  const Settings& s = b.settings;
  return size_points(size_steps(s.min_bytes, s.max_bytes, s.step_factor, s.step_bytes), size_chunks(b.op, world_size),
                     dtype_size(b.dtype));
}

// Refuses a sweep whose largest point cannot fit in memory, before anything runs.
void check_memory_upfront(Control& control, const std::vector<Block>& plan, const Topology& topo) {
  std::optional<std::string> problem;
  const std::uint64_t available = available_host_memory();
  for (const auto& b : plan) {
    const auto sizes = sizes_of(b, topo.world_size);
    if (sizes.empty()) continue;
    const SizePoint& big = sizes.back();
    const auto need = point_memory_need(b.op, big.chunk_count, b.dtype, topo.world_size);
    if (auto why = memory_shortfall(need, topo.ranks_on_my_node, available)) {
      problem = std::string(op_name(b.op)) + " at " + std::to_string(big.bytes) + " B: " + *why +
                "; accepted: a smaller --max-bytes, or fewer ranks per node";
      break;
    }
  }
  if (auto why = control.agree_error(problem)) throw UsageError(*why);
}

// Everything rank 0 writes: the JSON Lines file and the table. Other ranks hold none.
class Reports {
 public:
  Reports(const RunConfig& cfg, Control& control) {
    std::optional<std::string> failure;
    if (control.rank() == 0 && cfg.json_path) {
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
      ++end_.points;
      if (r.skipped) ++end_.skipped_points;
      if (r.wrong > 0) ++end_.wrong_points;
      if (json_) json_->write(result_json(r, run_id_));
    }
    if (table_) table_->add_row(row);
  }
  void end_block() {
    if (table_) table_->end_block();
  }
  int finish() {
    end_.run_id = run_id_;
    end_.end_time = utc_now_iso8601();
    end_.exit_status = end_.wrong_points > 0 ? 1 : 0;
    if (json_) json_->write(end_json(end_));
    if (table_) table_->footer();
    return end_.exit_status;
  }

 private:
  std::optional<JsonlWriter> json_;
  std::optional<TableReport> table_;
  std::string run_id_;
  EndRecord end_;
};

}  // namespace

int run_sweep(const RunConfig& cfg, const LaunchEnv& launch) {
  Control control(MPI_COMM_WORLD);
  // Checks first, the same on every rank, so a bad run stops before any output exists.
  check_world_size(launch, control.size());
  const std::vector<Block> plan = make_plan(cfg, Registry::get());
  check_plan_for_world(plan, control.size());
  const Topology topo = discover_topology(control);
  check_memory_upfront(control, plan, topo);
  std::unique_ptr<Backend> backend = make_backend(cfg, MPI_COMM_WORLD);
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
                &cfg};
  reports.start(run);

  PointEnv env{backend->transport(), control, topo, cfg.backend, cfg.device, cfg.quiet};
  for (const Block& b : plan) {
    reports.begin_block(b);
    for (const SizePoint& s : sizes_of(b, topo.world_size)) reports.add(measure_size(env, b, s));
    reports.end_block();
  }
  const int status = reports.finish();
  control.barrier();  // nobody finalizes while rank 0 still needs the others
  return status;
}

}  // namespace collbench
