// Pipelined ring (chain) broadcast: the root sends segments to its successor, each rank
// forwards segment k to its successor while receiving segment k+1, and the last rank of the
// chain only receives. Every link carries the message once, so for large messages the time
// approaches bytes / link bandwidth, independent of n; the price is n-1 + segments - 1 steps
// of latency, which is why small messages prefer the tree.
#include <span>

#include "collectives/patterns/ring.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/pipeline.hpp"

namespace collbench::broadcast_ring {
namespace {

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const bool root = me == a.root;
  const int pos = patterns::ring_position(me, a.root, n);
  const int prev = root ? -1 : patterns::ring_prev(me, n);
  const int next = patterns::ring_next(me, n);
  // A chain is a tree with one child per rank; it ends before wrapping back to the root.
  schedules::pipeline::broadcast(t, a, prev, std::span<const int>(&next, pos + 1 < n ? 1 : 0));
}

COLLBENCH_REGISTER({Op::broadcast, "ring", "any",
                    "pipelined chain from the root around the ring; segment k forwarded while k+1 arrives "
                    "(default 256 KiB segments)",
                    "any world size, any root, any count", &run}, {.simplicity_rank = 30});

}  // namespace
}  // namespace collbench::broadcast_ring
