#pragma once
// --dry-run: everything a run checks before measuring, without MPI — the plan against the
// registry, the world size (roots, pingpong pairs), memory per rank at each block's largest
// size — then the plan printed: one paragraph per block and the totals. Users check a sweep
// file this way before queueing it; the argv fuzzer (tests/harness/argv_fuzz.py) drives the
// whole command line through it.
#include <cstdio>
#include <vector>

#include "harness/plan/plan.hpp"
#include "harness/plan/run_config.hpp"
#include "harness/runtime/topology.hpp"

namespace collbench {

// The world a dry run plans for: --ranks, else the launcher's count, else 1; all on one node
// (the conservative case for memory).
int dry_run_world(const RunConfig& cfg, const LaunchEnv& launch);

// Throws UsageError as a real run would (world size, memory); prints the plan to `out`
// when `speaker`. Returns the exit status (ExitStatus::ok).
int dry_run(const RunConfig& cfg, const std::vector<Block>& plan, const LaunchEnv& launch, bool speaker,
            std::FILE* out);

}  // namespace collbench
