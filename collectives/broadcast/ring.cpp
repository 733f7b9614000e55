// Pipelined ring (chain) broadcast: the root sends segments to its successor, each rank
// forwards segment k to its successor while receiving segment k+1, and the last rank of the
// chain only receives. Every link carries the message once, so for large messages the time
// approaches bytes / link bandwidth, independent of n; the price is n-1 + segments - 1 steps
// of latency, which is why small messages prefer the tree.
#include <algorithm>
#include <array>

#include "collectives/patterns/ring.hpp"
#include "collectives/registry.hpp"

namespace collbench {
namespace {

constexpr int kTag = 201;
constexpr std::size_t kDefaultSegmentBytes = 256 << 10;
constexpr std::size_t kDepth = 4;  // segments in flight per direction

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const bool root = me == a.root;
  if (n == 1 || a.count == 0) {
    if (root) t.memory().copy(a.recv, a.send, a.bytes(a.count));  // no-op in place
    return;
  }

  const int pos = patterns::ring_position(me, a.root, n);
  const int prev = root ? -1 : patterns::ring_prev(me, n);
  const int next = pos + 1 < n ? patterns::ring_next(me, n) : -1;  // the chain ends before the root
  // Two ranks: one link, nothing to pipeline; one message is fastest (measured: 256 KiB
  // segments cost ~10 % at 1-4 MiB over shared memory).
  const std::size_t seg_bytes_wanted = a.segment_bytes ? a.segment_bytes : (n == 2 ? a.bytes(a.count) : kDefaultSegmentBytes);
  const std::size_t seg = std::max<std::size_t>(1, seg_bytes_wanted / a.elem_size());
  const std::size_t nseg = (a.count + seg - 1) / seg;
  // The root sends from `send` and copies each segment into its `recv` right after posting
  // that segment's send: the local copy overlaps the transfers instead of preceding them.
  const void* src = root ? a.send : a.recv;
  auto seg_bytes = [&](std::size_t k) { return a.bytes(std::min(seg, a.count - k * seg)); };

  // kDepth segments in flight each way: receives k .. k+kDepth-1 posted while k is waited
  // for, and the sends of k-kDepth+1 .. k outstanding, so a link never idles for one
  // segment's round trip (with one send in flight it did, once per segment).
  std::array<Request, kDepth> rq{}, sq{};
  if (prev >= 0)
    for (std::size_t k = 0; k + 1 < kDepth && k < nseg; ++k) rq[k] = t.irecv(elem_ptr(a.recv, k * seg, a.dtype), seg_bytes(k), prev, kTag);
  for (std::size_t k = 0; k < nseg; ++k) {
    if (prev >= 0) {
      // The slot of k + kDepth - 1 is (k - 1)'s, waited for in the previous round.
      const std::size_t ahead = k + kDepth - 1;
      if (ahead < nseg) rq[ahead % kDepth] = t.irecv(elem_ptr(a.recv, ahead * seg, a.dtype), seg_bytes(ahead), prev, kTag);
      t.wait(rq[k % kDepth]);
    }
    if (next >= 0) {
      t.wait(sq[k % kDepth]);  // segment k - kDepth delivered
      sq[k % kDepth] = t.isend(elem_ptr(src, k * seg, a.dtype), seg_bytes(k), next, kTag);
    }
    if (root) t.memory().copy(elem_ptr(a.recv, k * seg, a.dtype), elem_ptr(a.send, k * seg, a.dtype), seg_bytes(k));
  }
  t.wait_all(sq);
}

COLLBENCH_REGISTER({Op::broadcast, "ring", "any",
                    "pipelined chain from the root around the ring; segment k forwarded while k+1 arrives "
                    "(default 256 KiB segments)",
                    "any world size, any root, any count", &run});

}  // namespace
}  // namespace collbench
