#pragma once
// Tuning defaults shared by several algorithms, defined once. CollArgs::segment_bytes (the
// --segment option) overrides the segment sizes; 0 means these. The widest fan-out of any
// tree is a property of the topology, not a tunable: patterns::binomial::kMaxChildren.
#include <algorithm>
#include <cstddef>

#include "collectives/collective.hpp"

namespace collbench::schedules {

// Ring reduce-scatter / allgather / allreduce segment (schedules/ring.cpp). Measured on 2
// ranks over shared-memory MPI (float32 sum, 1-16 MiB): smaller segments pay more
// per-message overhead than they win in cache reuse; larger ones leave a ring of n > 2
// little to overlap.
inline constexpr std::size_t kRingSegmentBytes = 512 << 10;

// Segment of the parent/children pipelines (broadcast chain and tree, reduce tree) and of
// the bounded staging of naive reduce and in-place alltoall. Smaller than the ring's: a tree
// pays one segment time per level of depth, so the segment sets its latency.
inline constexpr std::size_t kPipelineSegmentBytes = 256 << 10;

// Segments in flight per direction in a pipeline (measured on the ring: 2 is slower, 8 no
// faster). Each one in flight holds one segment of receive scratch.
inline constexpr int kSegmentsInFlight = 4;

// Requests the naive all-at-once algorithms keep in flight (fixed-size arrays: nothing is
// allocated per call; all peers at once up to 33 ranks).
inline constexpr int kRequestWindow = 32;

// Elements per segment: CollArgs::segment_bytes when set, else `fallback_bytes`; at least 1.
inline std::size_t segment_elems(const CollArgs& a, std::size_t fallback_bytes) {
  return std::max<std::size_t>(1, (a.segment_bytes ? a.segment_bytes : fallback_bytes) / a.elem_size());
}

}  // namespace collbench::schedules
