#pragma once
// collbench --spawn N: this process is rank 0 and starts ranks 1..N-1 on this host, as
// mp.spawn does: this program again with the spawn variables of launchers.hpp; each child dies
// with its parent.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "collectives/launch/launch_env.hpp"

namespace collbench::launch {

// Starts ranks 1..s.size-1 (argv: this process's own); throws Error when fork fails.
std::vector<pid_t> spawn_ranks(char** argv, const Spec& s);

// Waits for the spawned ranks (they end with rank 0: the harness agrees on the end); any still
// running after `grace` is killed. `stop_now`: SIGTERM them first. Returns the first failed
// status (128 + signal for a killed rank, named on stderr), 0 if none.
int reap(const std::vector<pid_t>& pids, std::chrono::milliseconds grace, bool stop_now);

// A job identity no other --spawn on this host shares.
std::string spawn_job();

}  // namespace collbench::launch
