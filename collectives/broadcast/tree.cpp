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
constexpr std::size_t kDepth = 4;  // segments in flight per direction

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const bool root = me == a.root;
  if (n == 1 || a.count == 0) {
    if (root) t.memory().copy(a.recv, a.send, a.bytes(a.count));  // no-op in place
    return;
  }

  const int v = bt::vrank(me, a.root, n);
  const bt::Children kids = bt::children(v, n);
  const int parent = root ? -1 : bt::rank_of(bt::parent(v), a.root, n);
  // Two ranks: one link, nothing to pipeline; one message is fastest (measured: 256 KiB
  // segments cost ~10 % at 1-4 MiB over shared memory).
  const std::size_t seg_bytes_wanted = a.segment_bytes ? a.segment_bytes : (n == 2 ? a.bytes(a.count) : kDefaultSegmentBytes);
  const std::size_t seg = std::max<std::size_t>(1, seg_bytes_wanted / a.elem_size());
  const std::size_t nseg = (a.count + seg - 1) / seg;
  // The root sends from `send` and copies each segment into its `recv` right after posting
  // that segment's sends: the local copy overlaps the transfers instead of preceding them.
  const void* src = root ? a.send : a.recv;
  auto seg_ptr = [&](std::size_t k) { return elem_ptr(a.recv, k * seg, a.dtype); };
  auto seg_bytes = [&](std::size_t k) { return a.bytes(std::min(seg, a.count - k * seg)); };

  // kDepth segments in flight each way: receives k .. k+kDepth-1 posted while k is waited
  // for, and the sends of segments k-kDepth+1 .. k outstanding (one row per segment).
  std::array<Request, kDepth> rq{};
  std::array<std::array<Request, 32>, kDepth> sq{};
  if (parent >= 0)
    for (std::size_t k = 0; k + 1 < kDepth && k < nseg; ++k) rq[k] = t.irecv(seg_ptr(k), seg_bytes(k), parent, kTag);
  for (std::size_t k = 0; k < nseg; ++k) {
    if (parent >= 0) {
      const std::size_t ahead = k + kDepth - 1;  // its slot was (k - 1)'s, already waited for
      if (ahead < nseg) rq[ahead % kDepth] = t.irecv(seg_ptr(ahead), seg_bytes(ahead), parent, kTag);
      t.wait(rq[k % kDepth]);
    }
    auto& row = sq[k % kDepth];
    t.wait_all(std::span(row.data(), kids.count));  // segment k - kDepth delivered
    // Farthest child first: its subtree has the most rounds still to go.
    for (int i = kids.count - 1; i >= 0; --i)
      row[i] = t.isend(elem_ptr(src, k * seg, a.dtype), seg_bytes(k), bt::rank_of(kids.vranks[i], a.root, n), kTag);
    if (root) t.memory().copy(seg_ptr(k), elem_ptr(a.send, k * seg, a.dtype), seg_bytes(k));
  }
  for (auto& row : sq) t.wait_all(std::span(row.data(), kids.count));
}

COLLBENCH_REGISTER({Op::broadcast, "tree", "any",
                    "binomial tree, ceil(log2 n) rounds; segments pipelined down the tree (default 256 KiB)",
                    "any world size, any root, any count", &run});

}  // namespace
}  // namespace collbench
