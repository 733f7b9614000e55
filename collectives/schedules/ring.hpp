#pragma once
// The two pipelined phases of the ring — reduce-scatter and allgather — written once and
// shared by allreduce/ring, reduce_scatter/ring and allgather/ring. Not an algorithm itself:
// it registers nothing. Schedule (which chunk moves at which step): patterns/ring.hpp.
// Segments: CollArgs::segment_bytes, else kRingSegmentBytes (schedules/defaults.hpp).
// Messages use the roles tag::reduce_scatter and tag::allgather.
// Scratch: up to kSegmentsInFlight receive segments, never much more than one chunk (slot
// 0); a standalone reduce-scatter on more than 2 ranks also keeps about two chunks of partial
// results (slot 1).
#include <cstddef>

#include "collectives/collective.hpp"
#include "collectives/patterns/chunks.hpp"
#include "collectives/transport/transport.hpp"

namespace collbench::schedules::ring {

// Where ring chunk c (the numbering of patterns/ring.hpp) lives, in elements.
struct ChunkMap {
  int n = 1;
  std::size_t count = 0;
  // false: `count` elements split into n chunks differing by at most one (allreduce).
  // true:  n blocks of `count` elements each; ring chunk c is block c - 1, so that rank r
  //        ends the reduce-scatter owning block r (reduce_scatter, allgather).
  bool blocks = false;

  patterns::Range operator()(int c) const;
  std::size_t largest() const;
};

// Rank r ends with ring chunk rs_owned_chunk(r, n) fully reduced at `owned` (the chunk's
// first element). `in` is this rank's contribution, laid out by `map`; partial results of
// the other chunks go to `partials` (laid out by `map`, e.g. an allreduce's recv, which its
// allgather overwrites later; it may be `in`), or to scratch when it is null. `owned` may
// alias the owned chunk of `in`.
void reduce_scatter(Transport& t, const CollArgs& a, const ChunkMap& map, const void* in, void* owned,
                    void* partials = nullptr);

// On entry `buf` (laid out by `map`) holds this rank's owned chunk (rs_owned_chunk); on
// return it holds all n chunks.
void allgather(Transport& t, const CollArgs& a, const ChunkMap& map, void* buf);

// Both phases as one pipeline: `buf` ends with the reduction of every rank's `in` (which may
// be `buf`). Partial results are reduced straight into `buf`, and each segment of the owned
// chunk starts its allgather as soon as its reduction is final, while it is still in cache.
void reduce_scatter_allgather(Transport& t, const CollArgs& a, const ChunkMap& map, const void* in, void* buf);

}  // namespace collbench::schedules::ring
