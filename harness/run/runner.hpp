#pragma once
// The sweep loop: plan -> checks -> for each block and size, measure every algorithm ->
// JSON record + table row (rank 0). Collective over MPI_COMM_WORLD.
#include "harness/plan/run_config.hpp"
#include "harness/run/topology.hpp"

namespace collbench {

// Runs the whole sweep; returns the exit status (harness/exit_status.hpp): ok, wrong_results,
// below_expectation, write_failed (the results file could not be written: the sweep stopped at
// the next point boundary, the complete records written before are kept), or
// signal_exit_status(signal) when stopped by SIGTERM/SIGINT.
// Throws UsageError (every rank alike) for problems found before measuring; any other
// exception is a failure of this rank.
int run_sweep(const RunConfig& cfg, const LaunchEnv& launch);

}  // namespace collbench
