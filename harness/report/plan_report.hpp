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

// The wall time a run of `plan` on `world` ranks would take, from the timing engine's shape
// (warm-up of at least 5 ms per point, the samples with their start windows, the reference
// tools' extra round, verification) and an assumed cost per call: kAssumedStepUs per
// log2(world) step plus the point's bus bytes at kAssumedGBps. Seconds; the first real run's
// table gives the real rates. (Exposed for tests.)
inline constexpr double kAssumedStepUs = 5;
inline constexpr double kAssumedGBps = 2;
inline constexpr double kRunSetupS = 1.5;  // start, clock sync, link calibration, provenance (2 ranks, this VM)
double assumed_call_us(Op op, std::uint64_t bytes, int world);
double point_seconds(const Settings& s, double call_us, std::uint64_t bytes);
double estimated_seconds(const std::vector<Block>& plan, int world);

// Throws UsageError as a real run would (world size, memory); prints the plan to `out`
// when `speaker`. Returns the exit status (ExitStatus::ok).
int dry_run(const RunConfig& cfg, const std::vector<Block>& plan, const LaunchEnv& launch, bool speaker,
            std::FILE* out);

}  // namespace collbench
