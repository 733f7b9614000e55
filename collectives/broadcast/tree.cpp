// Binomial-tree broadcast: ceil(log2 n) rounds instead of the naive n-1 sends from the root.
// Large messages go in segments: a rank forwards segment k to its children while segment
// k+1 is already arriving from its parent, so the tree's depth costs one segment time per
// level instead of one whole-message time. Every non-root receives each segment once;
// each rank sends it once per child.
#include <algorithm>
#include <array>

#include "collectives/patterns/binomial.hpp"
#include "collectives/registry.hpp"

namespace collbench {
namespace {

namespace bt = patterns::binomial;

constexpr int kTag = 200;
constexpr std::size_t kDefaultSegmentBytes = 256 << 10;

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const bool root = me == a.root;
  if (root) t.memory().copy(a.recv, a.send, a.bytes(a.count));  // no-op in place
  if (n == 1 || a.count == 0) return;

  const int v = bt::vrank(me, a.root, n);
  const bt::Children kids = bt::children(v, n);
  const int parent = root ? -1 : bt::rank_of(bt::parent(v), a.root, n);
  const std::size_t seg =
      std::max<std::size_t>(1, (a.segment_bytes ? a.segment_bytes : kDefaultSegmentBytes) / a.elem_size());
  const std::size_t nseg = (a.count + seg - 1) / seg;
  // The root sends from `send`, so its sends never depend on the local copy above.
  const void* src = root ? a.send : a.recv;
  auto seg_ptr = [&](std::size_t k) { return elem_ptr(a.recv, k * seg, a.dtype); };
  auto seg_bytes = [&](std::size_t k) { return a.bytes(std::min(seg, a.count - k * seg)); };

  // Two receives in flight (segments k and k+1), the sends of one segment at a time.
  std::array<Request, 2> rq{};
  std::array<Request, 32> sq{};
  if (parent >= 0) rq[0] = t.irecv(seg_ptr(0), seg_bytes(0), parent, kTag);
  for (std::size_t k = 0; k < nseg; ++k) {
    if (parent >= 0) {
      if (k + 1 < nseg) rq[(k + 1) % 2] = t.irecv(seg_ptr(k + 1), seg_bytes(k + 1), parent, kTag);
      t.wait(rq[k % 2]);
    }
    t.wait_all(std::span(sq.data(), kids.count));  // segment k-1 delivered: bounds what is in flight
    // Farthest child first: its subtree has the most rounds still to go.
    for (int i = kids.count - 1; i >= 0; --i)
      sq[i] = t.isend(elem_ptr(src, k * seg, a.dtype), seg_bytes(k), bt::rank_of(kids.vranks[i], a.root, n), kTag);
  }
  t.wait_all(std::span(sq.data(), kids.count));
}

COLLBENCH_REGISTER({Op::broadcast, "tree", "any",
                    "binomial tree, ceil(log2 n) rounds; segments pipelined down the tree (default 256 KiB)",
                    "any world size, any root, any count", &run});

}  // namespace
}  // namespace collbench
