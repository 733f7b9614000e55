#pragma once
// --resume in the sweep: what results/resume.hpp says is done is not measured again.
#include <vector>

#include "harness/measure/collective_point.hpp"
#include "harness/results/resume.hpp"

namespace collbench {

// One size of a block with the points not yet done measured by the block's own runner
// (collective_point.hpp, p2p_point.hpp); the done ones (algorithms, or pingpong pairs) come
// back as placeholders (resumed = true, skipped with a reason) so the table keeps its columns.
std::vector<PointResult> measure_size_resuming(PointEnv& env, const CollectiveBlock& block, const SizePoint& size,
                                               const ResumeSet& done);
// --workload ddp: measured whole every time (--resume does not skip workload records).
std::vector<PointResult> measure_size_resuming(PointEnv& env, const DdpBlock& block, const SizePoint& size,
                                               const ResumeSet& done);
std::vector<PointResult> measure_size_resuming(PointEnv& env, const P2pBlock& block, const SizePoint& size,
                                               const ResumeSet& done);

}  // namespace collbench
