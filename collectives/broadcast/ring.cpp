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

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const bool root = me == a.root;
  if (root) t.memory().copy(a.recv, a.send, a.bytes(a.count));  // no-op in place
  if (n == 1 || a.count == 0) return;

  const int pos = patterns::ring_position(me, a.root, n);
  const int prev = root ? -1 : patterns::ring_prev(me, n);
  const int next = pos + 1 < n ? patterns::ring_next(me, n) : -1;  // the chain ends before the root
  const std::size_t seg =
      std::max<std::size_t>(1, (a.segment_bytes ? a.segment_bytes : kDefaultSegmentBytes) / a.elem_size());
  const std::size_t nseg = (a.count + seg - 1) / seg;
  const void* src = root ? a.send : a.recv;  // the root's sends never wait for its local copy
  auto seg_bytes = [&](std::size_t k) { return a.bytes(std::min(seg, a.count - k * seg)); };

  std::array<Request, 2> rq{};  // segments k and k+1 arriving
  Request sq{};                 // segment k-1 leaving
  if (prev >= 0) rq[0] = t.irecv(a.recv, seg_bytes(0), prev, kTag);
  for (std::size_t k = 0; k < nseg; ++k) {
    if (prev >= 0) {
      if (k + 1 < nseg) rq[(k + 1) % 2] = t.irecv(elem_ptr(a.recv, (k + 1) * seg, a.dtype), seg_bytes(k + 1), prev, kTag);
      t.wait(rq[k % 2]);
    }
    if (next >= 0) {
      t.wait(sq);
      sq = t.isend(elem_ptr(src, k * seg, a.dtype), seg_bytes(k), next, kTag);
    }
  }
  t.wait(sq);
}

COLLBENCH_REGISTER({Op::broadcast, "ring", "any",
                    "pipelined chain from the root around the ring; segment k forwarded while k+1 arrives "
                    "(default 256 KiB segments)",
                    "any world size, any root, any count", &run});

}  // namespace
}  // namespace collbench
