// Binomial-tree reduce: each rank folds its children's partial results into its own and
// passes one partial up, so the root receives ceil(log2 n) messages instead of n-1 and the
// reduction work is spread over the tree. Pipelined in segments: while segment k is being
// reduced and sent up, segment k+1 is already arriving from the children.
// Buffers: children's segments land in scratch (double-buffered, one per child); the
// accumulator is recv at the root (the first fold reads send, so nothing is copied) and a
// two-segment ring in scratch elsewhere; leaves send straight from send.
#include <algorithm>
#include <array>

#include "collectives/patterns/binomial.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/defaults.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::reduce_tree {
namespace {

namespace bt = patterns::binomial;

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const bool root = me == a.root;
  if (a.count == 0) return;
  if (n == 1) {
    t.memory().copy(a.recv, a.send, a.bytes(a.count));  // no-op in place
    return;
  }

  const int v = bt::vrank(me, a.root, n);
  const bt::Children kids = bt::children(v, n);
  const int nk = kids.count;
  const int parent = root ? -1 : bt::rank_of(bt::parent(v), a.root, n);
  const std::size_t seg = std::min(a.count, schedules::segment_elems(a, schedules::kPipelineSegmentBytes));
  const std::size_t nseg = (a.count + seg - 1) / seg;
  auto seg_count = [&](std::size_t k) { return std::min(seg, a.count - k * seg); };

  // Segment k of child i lands in in_buf(k, i); segment k is accumulated in acc(k).
  void* in = nk ? a.scratch(a.bytes(2 * nk * seg), 1) : nullptr;
  void* ring = (!root && nk) ? a.scratch(a.bytes(2 * seg), 0) : nullptr;
  auto in_buf = [&](std::size_t k, int i) { return elem_ptr(in, ((k % 2) * nk + i) * seg, a.dtype); };
  auto acc = [&](std::size_t k) { return root ? elem_ptr(a.recv, k * seg, a.dtype) : elem_ptr(ring, (k % 2) * seg, a.dtype); };
  auto post_recvs = [&](std::size_t k, std::array<Request, bt::kMaxChildren>& rs) {
    for (int i = 0; i < nk; ++i)
      rs[i] = t.irecv(in_buf(k, i), a.bytes(seg_count(k)), bt::rank_of(kids.vranks[i], a.root, n), tag::data);
  };

  std::array<std::array<Request, bt::kMaxChildren>, 2> rq{};  // receives of segments k and k+1
  Request sq{};                                  // segment k-1 going up
  if (nk) post_recvs(0, rq[0]);
  for (std::size_t k = 0; k < nseg; ++k) {
    if (nk && k + 1 < nseg) post_recvs(k + 1, rq[(k + 1) % 2]);
    const std::size_t cnt = seg_count(k);
    const void* mine = elem_ptr(a.send, k * seg, a.dtype);
    const void* out = mine;  // a leaf passes its own data up unchanged
    // Smallest subtree first: it is the one most likely to have arrived.
    for (int i = 0; i < nk; ++i) {
      t.wait(rq[k % 2][i]);
      t.memory().reduce(a.op, acc(k), i == 0 ? mine : acc(k), in_buf(k, i), cnt);
      out = acc(k);
    }
    if (parent >= 0) {
      t.wait(sq);  // also frees the ring slot segment k+1 will use
      sq = t.isend(out, a.bytes(cnt), parent, tag::data);
    }
  }
  t.wait(sq);
}

COLLBENCH_REGISTER({Op::reduce, "tree", "any",
                    "binomial tree: children's partials folded on the way up, ceil(log2 n) rounds; "
                    "pipelined segments (default 256 KiB)",
                    "any world size, any root, any count; scratch 2 x children x segment", &run},
                    {.simplicity_rank = 40});

}  // namespace
}  // namespace collbench::reduce_tree
