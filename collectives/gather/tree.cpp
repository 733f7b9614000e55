// Binomial-tree gather: each rank collects its subtree's blocks and sends them up as one
// message, so the root receives ceil(log2 n) messages instead of n-1 (fewer latencies; the
// same (n-1) × count bytes reach the root). A subtree is contiguous in virtual ranks
// (rank - root mod n), so inner ranks stage their subtree in scratch in virtual order. At
// the root a subtree is contiguous in recv too unless it wraps past rank n-1 (root != 0):
// at most one does; it alone is staged in scratch and rotated into place, the others land
// in recv directly.
// Scratch is message-sized by nature, not by accident: a binomial tree forwards a whole
// subtree as one message, so an inner rank must hold it (at most n/2 blocks; the root's
// wrapped subtree fewer than n). That stays below the root's n × count recv buffer, so send +
// recv + scratch stay within 3× the largest buffer.
#include <array>

#include "collectives/patterns/binomial.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::gather_tree {
namespace {

namespace bt = patterns::binomial;

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  if (a.count == 0) return;
  const int v = bt::vrank(me, a.root, n);
  const bt::Children kids = bt::children(v, n);
  auto blocks = [&](int nblocks) { return a.bytes(a.count * nblocks); };
  std::array<Request, bt::kMaxChildren> rq{};

  if (me == a.root) {
    void* wrapped = nullptr;  // staging of the one subtree that wraps, if any
    bt::RankSpan wspan{};
    for (int i = 0; i < kids.count; ++i) {
      const int c = kids.vranks[i], from = bt::rank_of(c, a.root, n);
      const bt::RankSpan s = bt::subtree_ranks(c, a.root, n);
      void* dst = elem_ptr(a.recv, s.first * a.count, a.dtype);
      if (s.wraps()) {
        wspan = s;
        dst = wrapped = a.scratch(blocks(s.head + s.tail));
      }
      rq[i] = t.irecv(dst, blocks(s.head + s.tail), from, tag::data);
    }
    t.memory().copy(elem_ptr(a.recv, me * a.count, a.dtype), a.send, blocks(1));  // no-op in place
    t.wait_all(std::span(rq.data(), kids.count));
    if (wrapped) {  // blocks of ranks first..n-1, then of 0..tail-1
      t.memory().copy(elem_ptr(a.recv, wspan.first * a.count, a.dtype), wrapped, blocks(wspan.head));
      t.memory().copy(a.recv, elem_ptr(wrapped, wspan.head * a.count, a.dtype), blocks(wspan.tail));
    }
    return;
  }

  const int parent = bt::rank_of(bt::parent(v), a.root, n);
  const int size = bt::subtree_size(v, n);
  if (kids.count == 0) {  // a leaf sends its own block, no staging
    t.send(a.send, blocks(1), parent, tag::data);
    return;
  }
  // Scratch holds the subtree in virtual order: own block, then each child's subtree.
  void* sub = a.scratch(blocks(size));
  for (int i = 0; i < kids.count; ++i) {
    const int c = kids.vranks[i];
    rq[i] = t.irecv(elem_ptr(sub, (c - v) * a.count, a.dtype), blocks(bt::subtree_size(c, n)),
                    bt::rank_of(c, a.root, n), tag::data);
  }
  t.memory().copy(sub, a.send, blocks(1));
  t.wait_all(std::span(rq.data(), kids.count));
  t.send(sub, blocks(size), parent, tag::data);
}

COLLBENCH_REGISTER({Op::gather, "tree", "any",
                    "binomial tree: each subtree's blocks go up as one message, ceil(log2 n) rounds",
                    "any world size, any root, any count; inner ranks stage their subtree in scratch", &run},
                    {.simplicity_rank = 40});

}  // namespace
}  // namespace collbench::gather_tree
