#pragma once
// The sweep loop: plan -> checks -> for each block and size, measure every algorithm ->
// JSON record + table row (rank 0). Collective over the World the backend's bootstrap made.
#include "collectives/backends/backend.hpp"
#include "harness/plan/run_config.hpp"
#include "harness/runtime/last_words.hpp"
#include "harness/runtime/signals.hpp"
#include "harness/runtime/topology.hpp"

namespace collbench {

// What is one per process, whatever number of ranks it hosts (one under MPI, all of them for
// the thread backend): the signal watcher, the words said when a helper thread ends the
// process (rank 0's end record), and the bootstrap's facts for the run record.
struct ProcessServices {
  LastWords& last_words;
  TerminationWatcher& stop;
  Facts launch_facts;
};

// Runs the whole sweep as one rank of `world`; returns the exit status (harness/exit_status.hpp):
// ok, wrong_results, below_expectation, write_failed (the results file could not be written:
// the sweep stopped at the next point boundary, the complete records written before are kept),
// or signal_exit_status(signal) when stopped by SIGTERM/SIGINT. Every rank returns rank 0's.
// Throws UsageError (every rank alike) for problems found before measuring; any other
// exception is a failure of this rank.
int run_sweep(const RunConfig& cfg, const LaunchEnv& launch, World& world, ProcessServices& process);

}  // namespace collbench
