#pragma once
// Measuring a DDP block (--workload ddp): per algorithm, one step = every gradient bucket of the
// model all-reduced back to back, each from the gradients (send) into its own bucket buffer
// (recv), as DDP copies gradients into its buckets. A step is timed like one collective sample
// (clock or barrier start, max over ranks; --interleave alternates the algorithms step by step),
// each bucket's all-reduce timed inside it; then every bucket verified.
#include <vector>

#include "harness/measure/collective_point.hpp"

namespace collbench {

// Collective over all ranks; all ranks return the same results, one per algorithm.
std::vector<PointResult> measure_ddp(PointEnv& env, const DdpBlock& block);

}  // namespace collbench
