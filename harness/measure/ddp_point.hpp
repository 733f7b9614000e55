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

// What one rank holds for the block: the gradients and the buckets (twice the gradient bytes:
// what DDP holds too, unless gradient_as_bucket_view), plus the largest bucket's allowance
// for algorithm scratch and library temporaries, and for avg its scaled copy.
std::uint64_t ddp_memory_need(const DdpBlock& block, int world_size);

// Each bucket's byte offset in the step's send and recv buffers (256-byte aligned, like a
// device allocation), and the total.
struct DdpLayout {
  std::vector<std::uint64_t> offsets;
  std::uint64_t total = 0;
};
DdpLayout ddp_layout(const DdpBlock& block);

}  // namespace collbench
