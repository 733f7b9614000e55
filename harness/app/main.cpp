// collbench: parse, then run the sweep on every rank the backend's bootstrap starts (MPI_Init
// under mpirun/srun; N threads for --backend thread), mapping failures to the exit statuses of
// harness/exit_status.hpp (the one list; `--help` prints it): bad usage is one line from rank 0
// only; a rank that fails ends the job, so every rank ends in bounded time.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "collectives/backends/backend.hpp"
#include "collectives/core/error.hpp"
#include "collectives/registry.hpp"
#include "harness/app/sweep.hpp"
#include "harness/exit_status.hpp"
#include "harness/plan/cli.hpp"
#include "harness/plan/plan.hpp"
#include "harness/report/listing.hpp"
#include "harness/report/plan_report.hpp"
#include "harness/runtime/signals.hpp"
#include "harness/runtime/topology.hpp"

namespace {

using namespace collbench;

void usage_error(const UsageError& e) { std::fprintf(stderr, "collbench: error: %s\n", e.what()); }

// Everything that needs no other rank: --help, --list, --print-layouts, --dry-run, and all input
// checks. Returns an exit status when done, or nothing when the sweep should run.
std::optional<int> prepare(int argc, char** argv, const LaunchEnv& launch, bool speaker, RunConfig& cfg) {
  try {
    CommandLine cl = parse_command_line(argc, argv);
    if (cl.help) {
      if (speaker) std::fputs(cl.help->c_str(), stdout);
      return code(ExitStatus::ok);
    }
    cfg = std::move(cl.config);
    if (cfg.print_backend) {
      if (speaker) {
        std::printf("%s", cfg.backend.c_str());
        for (const auto& b : Backends::get().check(cfg.backend, cfg.device).bootstraps) std::printf(" %s", b.c_str());
        std::printf("\n");
      }
      return code(ExitStatus::ok);
    }
    if (cfg.print_layouts) {
      if (speaker)
        for (const auto& l : cfg.layouts) std::printf("%s\n", l.c_str());
      return code(ExitStatus::ok);
    }
    if (cfg.list) {
      if (speaker && cfg.list_json) std::fputs(algorithm_list_json(Registry::get()).c_str(), stdout);
      else if (speaker) print_algorithm_list(stdout, Registry::get(), {cl.list_ops, cl.list_backend});
      return code(ExitStatus::ok);
    }
    const auto plan = make_plan(cfg, Registry::get());                    // unknown algos fail here, before any rank starts
    if (cfg.dry_run) return dry_run(cfg, plan, launch, speaker, stdout);  // no bootstrap at all
    return std::nullopt;
  } catch (const UsageError& e) {
    if (speaker) usage_error(e);
    return code(ExitStatus::usage);
  }
}

int run(int argc, char** argv, const RunConfig& cfg, const LaunchEnv& launch, bool speaker) {
  std::unique_ptr<Bootstrap> bootstrap;
  try {
    const BackendInfo& backend = Backends::get().check(cfg.backend, cfg.device);
    const BootstrapInfo& boot = Backends::get().bootstrap_for(backend, cfg.spawn ? "spawn" : cfg.launcher,
                                                              [](const char* n) -> const char* { return std::getenv(n); },
                                                              launch.size);
    double timeout_s = 0;  // ranks meet within the longest --timeout of the run
    for (const auto& c : cfg.cases) timeout_s = std::max(timeout_s, c.settings.timeout_s);
    if (timeout_s <= 0) timeout_s = Settings{}.timeout_s;
    BootstrapOptions options;
    options.ranks = cfg.spawn ? cfg.spawn : cfg.ranks;
    options.declared_size = launch.size;
    options.declared_by = launch.size_by;
    options.timeout = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
    options.usage_status = code(ExitStatus::usage);
    bootstrap = boot.make(options);
  } catch (const UsageError& e) {
    if (speaker) usage_error(e);
    return code(ExitStatus::usage);
  }
  // Before the bootstrap starts threads (MPI's, the thread backend's ranks): they inherit the
  // mask, and only the watcher takes the signals (signals.hpp).
  block_termination_signals();
  LastWords last_words;
  TerminationWatcher stop(kTerminationGrace, speaker, &last_words);
  ProcessServices process{last_words, stop, {}};  // rank 0's sweep sets the words
  bootstrap->describe(process.launch_facts);
  return bootstrap->run(
      argc, argv,
      [&](World& world) -> int {
        int status = code(ExitStatus::usage);
        try {
          status = run_sweep(cfg, launch, world, process);
        } catch (const UsageError& e) {
          // Raised alike on every rank: one line from rank 0 (of the launcher, for singletons).
          if (world.rank() == 0 && speaker) usage_error(e);
        }
        process.stop.settle(status);  // the same on every rank
        return status;
      },
      // Timeouts and transport errors name op/algo/size/iteration/rank/peer in what().
      [](int rank, const char* what) { std::fprintf(stderr, "collbench: error: rank %d: %s\n", rank, what); },
      code(ExitStatus::rank_failed));
}

}  // namespace

int main(int argc, char** argv) {
  const LaunchEnv launch = read_launch_env([](const char* n) -> const char* { return std::getenv(n); });
  const bool speaker = !launch.rank || *launch.rank == 0;
  RunConfig cfg;
  if (auto done = prepare(argc, argv, launch, speaker, cfg)) return *done;
  return run(argc, argv, cfg, launch, speaker);
}
