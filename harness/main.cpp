// collbench: parse, then run the sweep under MPI, mapping failures to the exit statuses of
// harness/exit_status.hpp (the one list; `--help` prints it): bad usage is one line from rank 0
// only; a rank that fails aborts the job, so every rank ends in bounded time.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "collectives/core/error.hpp"
#include "collectives/registry.hpp"
#include "harness/exit_status.hpp"
#include "harness/plan/cli.hpp"
#include "harness/plan/plan.hpp"
#include "harness/report/listing.hpp"
#include "harness/report/plan_report.hpp"
#include "harness/run/runner.hpp"
#include "harness/run/signals.hpp"
#include "harness/run/topology.hpp"

namespace {

using namespace collbench;

void usage_error(const UsageError& e) { std::fprintf(stderr, "collbench: error: %s\n", e.what()); }

// Everything that needs no MPI: --help, --list, --print-layouts, --dry-run, and all input checks.
// Returns an exit status when done, or nothing when the sweep should run.
std::optional<int> prepare(int argc, char** argv, const LaunchEnv& launch, bool speaker, RunConfig& cfg) {
  try {
    CommandLine cl = parse_command_line(argc, argv);
    if (cl.help) {
      if (speaker) std::fputs(cl.help->c_str(), stdout);
      return code(ExitStatus::ok);
    }
    cfg = std::move(cl.config);
    if (cfg.print_layouts) {
      if (speaker)
        for (const auto& l : cfg.layouts) std::printf("%s\n", l.c_str());
      return code(ExitStatus::ok);
    }
    if (cfg.list) {
      if (speaker) print_algorithm_list(stdout, Registry::get());
      return code(ExitStatus::ok);
    }
    const auto plan = make_plan(cfg, Registry::get());                    // unknown algos fail here, before MPI starts
    if (cfg.dry_run) return dry_run(cfg, plan, launch, speaker, stdout);  // no MPI at all
    return std::nullopt;
  } catch (const UsageError& e) {
    if (speaker) usage_error(e);
    return code(ExitStatus::usage);
  }
}

int run_under_mpi(int argc, char** argv, const RunConfig& cfg, const LaunchEnv& launch, bool speaker) {
  int provided = 0;
  block_termination_signals();  // before MPI starts its threads: they inherit the mask (signals.hpp)
  // MPI_THREAD_SINGLE, what MPI_Init (and so the reference tools: OSU, a plain MPI loop)
  // gives: Open MPI 4.1 takes a mutex in every send, receive and progress step, and waits
  // through its multi-threaded completion path, at any level above SINGLE — measured on this
  // machine, collbench's 8 B library allreduce (--batch) 0.31 -> 0.19 us, pingpong latency
  // 0.175 -> 0.140 us, pingpong bw at 8 B 0.105 -> 0.058 us per message (FUNNELED -> SINGLE,
  // same binary, interleaved runs). Only this thread calls MPI; the signal watcher and the
  // watchdog (run/signals.hpp, run/watchdog.hpp) never do, and only read atomics.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = code(ExitStatus::ok);
  try {
    status = run_sweep(cfg, launch);
  } catch (const UsageError& e) {
    // Raised alike on every rank: one line from rank 0 (of the launcher, for singletons).
    if (rank == 0 && speaker) usage_error(e);
    status = code(ExitStatus::usage);
  } catch (const std::exception& e) {
    // Timeouts and transport errors name op/algo/size/iteration/rank/peer in what().
    std::fprintf(stderr, "collbench: error: rank %d: %s\n", rank, e.what());
    std::fflush(stderr);
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, code(ExitStatus::rank_failed));
    return code(ExitStatus::rank_failed);
  }
  MPI_Finalize();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  const LaunchEnv launch = read_launch_env([](const char* n) -> const char* { return std::getenv(n); });
  const bool speaker = !launch.rank || *launch.rank == 0;
  RunConfig cfg;
  if (auto done = prepare(argc, argv, launch, speaker, cfg)) return *done;
  return run_under_mpi(argc, argv, cfg, launch, speaker);
}
