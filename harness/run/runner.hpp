#pragma once
// The sweep loop: plan -> checks -> for each block and size, measure every algorithm ->
// JSON record + table row (rank 0). Collective over MPI_COMM_WORLD.
#include "harness/plan/run_config.hpp"
#include "harness/run/topology.hpp"

namespace collbench {

// The results file could not be written (disk full, I/O error): the sweep stopped at the next
// point boundary; the complete records written before are kept.
inline constexpr int kExitResultsLost = 4;

// Runs the whole sweep; returns the exit status (0; 1 when some point had wrong results;
// kExitResultsLost; 128 + signal when stopped by SIGTERM/SIGINT).
// Throws UsageError (every rank alike) for problems found before measuring; any other
// exception is a failure of this rank.
int run_sweep(const RunConfig& cfg, const LaunchEnv& launch);

}  // namespace collbench
