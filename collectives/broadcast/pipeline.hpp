#pragma once
// The segment pipeline shared by the ring (chain) and tree broadcasts: receive each segment
// from one parent and forward it to a list of children, kDepth segments in flight each way.
// The topologies differ only in who the parent and children are.
#include <algorithm>
#include <array>
#include <span>

#include "collectives/registry.hpp"

namespace collbench::broadcast {

constexpr std::size_t kDefaultSegmentBytes = 256 << 10;
constexpr std::size_t kDepth = 4;  // segments in flight per direction
constexpr int kMaxChildren = 32;

// parent < 0 at the root; `children` are real ranks, in the order to send (first = first
// served). n == 1 and count == 0 must be handled by the caller.
inline void pipeline(Transport& t, const CollArgs& a, int parent, std::span<const int> children, int tag) {
  const int n = t.size();
  const bool root = parent < 0;
  // Two ranks: one link, nothing to pipeline; one message is fastest (measured: 256 KiB
  // segments cost ~10 % at 1-4 MiB over shared memory).
  const std::size_t wanted = a.segment_bytes ? a.segment_bytes : (n == 2 ? a.bytes(a.count) : kDefaultSegmentBytes);
  const std::size_t seg = std::max<std::size_t>(1, wanted / a.elem_size());
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
    for (std::size_t k = 0; k + 1 < kDepth && k < nseg; ++k) rq[k] = t.irecv(seg_ptr(k), seg_bytes(k), parent, tag);
  for (std::size_t k = 0; k < nseg; ++k) {
    if (!root) {
      const std::size_t ahead = k + kDepth - 1;  // its slot was (k - 1)'s, already waited for
      if (ahead < nseg) rq[ahead % kDepth] = t.irecv(seg_ptr(ahead), seg_bytes(ahead), parent, tag);
      t.wait(rq[k % kDepth]);
    }
    auto& row = sq[k % kDepth];
    t.wait_all(std::span(row.data(), nkids));  // segment k - kDepth delivered
    for (std::size_t i = 0; i < nkids; ++i)
      row[i] = t.isend(elem_ptr(src, k * seg, a.dtype), seg_bytes(k), children[i], tag);
    if (root) t.memory().copy(seg_ptr(k), elem_ptr(a.send, k * seg, a.dtype), seg_bytes(k));
  }
  for (auto& row : sq) t.wait_all(std::span(row.data(), nkids));
}

}  // namespace collbench::broadcast
