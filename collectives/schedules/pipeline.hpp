#pragma once
// The segment pipeline shared by the ring (chain) and tree broadcasts: receive each segment
// from one parent and forward it to a list of children, kSegmentsInFlight segments in flight
// each way. The topologies differ only in who the parent and children are. Messages use the
// role tag::data; no scratch (segments land in place and are forwarded from there).
#include <algorithm>
#include <array>
#include <span>

#include "collectives/collective.hpp"
#include "collectives/patterns/binomial.hpp"
#include "collectives/schedules/defaults.hpp"
#include "collectives/schedules/tags.hpp"
#include "collectives/transport/transport.hpp"

namespace collbench::schedules::pipeline {

// Most children one rank forwards to: the widest tree there is (a binomial one).
inline constexpr int kMaxChildren = patterns::binomial::kMaxChildren;

// parent < 0 at the root; `children` (at most kMaxChildren) are real ranks, in the order to
// send (first = first served). Any world size and count, 1 and 0 included.
inline void broadcast(Transport& t, const CollArgs& a, int parent, std::span<const int> children) {
  constexpr std::size_t kDepth = kSegmentsInFlight;
  const int n = t.size();
  const bool root = parent < 0;
  if (n == 1 || a.count == 0) {
    if (root) t.memory().copy(a.recv, a.send, a.bytes(a.count));  // a no-op in place
    return;
  }
  // Two ranks: one link, nothing to pipeline; one message is fastest (measured: 256 KiB
  // segments cost ~10 % at 1-4 MiB over shared memory).
  const std::size_t seg = segment_elems(a, n == 2 ? a.bytes(a.count) : kPipelineSegmentBytes);
  const std::size_t nseg = (a.count + seg - 1) / seg;
  // The root sends from `send` and copies each segment into its `recv` right after posting
  // that segment's sends: the local copy overlaps the transfers instead of preceding them.
  const void* src = root ? a.send : a.recv;
  auto seg_ptr = [&](std::size_t k) { return elem_ptr(a.recv, k * seg, a.dtype); };
  auto seg_bytes = [&](std::size_t k) { return a.bytes(std::min(seg, a.count - k * seg)); };
  const std::size_t nkids = children.size();

  // kDepth segments in flight each way: receives k .. k+kDepth-1 posted while k is waited
  // for, and the sends of segments k-kDepth+1 .. k outstanding (one row per segment), so a
  // link never idles for one segment's round trip.
  std::array<Request, kDepth> rq{};
  std::array<std::array<Request, kMaxChildren>, kDepth> sq{};
  if (!root)
    for (std::size_t k = 0; k + 1 < kDepth && k < nseg; ++k)
      rq[k] = t.irecv(seg_ptr(k), seg_bytes(k), parent, tag::data);
  for (std::size_t k = 0; k < nseg; ++k) {
    if (!root) {
      const std::size_t ahead = k + kDepth - 1;  // its slot was (k - 1)'s, already waited for
      if (ahead < nseg) rq[ahead % kDepth] = t.irecv(seg_ptr(ahead), seg_bytes(ahead), parent, tag::data);
      t.wait(rq[k % kDepth]);
    }
    auto& row = sq[k % kDepth];
    t.wait_all(std::span(row.data(), nkids));  // segment k - kDepth delivered
    for (std::size_t i = 0; i < nkids; ++i)
      row[i] = t.isend(elem_ptr(src, k * seg, a.dtype), seg_bytes(k), children[i], tag::data);
    if (root) t.memory().copy(seg_ptr(k), elem_ptr(a.send, k * seg, a.dtype), seg_bytes(k));
  }
  for (auto& row : sq) t.wait_all(std::span(row.data(), nkids));
}

}  // namespace collbench::schedules::pipeline
