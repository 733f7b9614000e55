// Binomial-tree scatter, the mirror of the tree gather: the root sends each child its whole
// subtree's blocks as one message, and inner ranks split what they received among their own
// children. ceil(log2 n) rounds instead of n-1 sends from the root. A subtree is contiguous
// in virtual ranks (rank - root mod n); in the root's send buffer it is contiguous too unless
// it wraps past rank n-1 (root != 0): at most one does, and it alone is staged in scratch.
// Scratch is message-sized by nature: an inner rank receives its whole subtree as one
// message before splitting it (at most n/2 blocks; the root's wrapped subtree fewer than n),
// below the n × count send buffer, so send + recv + scratch stay within 3× the largest.
#include <array>

#include "collectives/patterns/binomial.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::scatter_tree {
namespace {

namespace bt = patterns::binomial;

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  if (a.count == 0) return;
  const int v = bt::vrank(me, a.root, n);
  const bt::Children kids = bt::children(v, n);
  auto blocks = [&](int nblocks) { return a.bytes(a.count * nblocks); };
  std::array<Request, bt::kMaxChildren> sq{};

  if (me == a.root) {
    // Farthest child first: its subtree has the most rounds still to go.
    for (int i = kids.count - 1; i >= 0; --i) {
      const int c = kids.vranks[i];
      const bt::RankSpan s = bt::subtree_ranks(c, a.root, n);
      const void* src = elem_ptr(a.send, s.first * a.count, a.dtype);
      if (s.wraps()) {  // blocks of ranks first..n-1, then of 0..tail-1, made contiguous
        void* stage = a.scratch(blocks(s.head + s.tail));
        t.memory().copy(stage, src, blocks(s.head));
        t.memory().copy(elem_ptr(stage, s.head * a.count, a.dtype), a.send, blocks(s.tail));
        src = stage;
      }
      sq[i] = t.isend(src, blocks(s.head + s.tail), bt::rank_of(c, a.root, n), tag::data);
    }
    t.memory().copy(a.recv, elem_ptr(a.send, me * a.count, a.dtype), blocks(1));  // no-op in place
    t.wait_all(std::span(sq.data(), kids.count));
    return;
  }

  const int parent = bt::rank_of(bt::parent(v), a.root, n);
  if (kids.count == 0) {  // a leaf's subtree is its own block: receive it in place
    t.recv(a.recv, blocks(1), parent, tag::data);
    return;
  }
  // The subtree arrives in virtual order: own block, then each child's subtree.
  void* sub = a.scratch(blocks(bt::subtree_size(v, n)));
  t.recv(sub, blocks(bt::subtree_size(v, n)), parent, tag::data);
  for (int i = kids.count - 1; i >= 0; --i) {
    const int c = kids.vranks[i];
    sq[i] = t.isend(elem_ptr(sub, (c - v) * a.count, a.dtype), blocks(bt::subtree_size(c, n)),
                    bt::rank_of(c, a.root, n), tag::data);
  }
  t.memory().copy(a.recv, sub, blocks(1));
  t.wait_all(std::span(sq.data(), kids.count));
}

COLLBENCH_REGISTER({Op::scatter, "tree", "any",
                    "binomial tree: each child gets its whole subtree's blocks in one message, ceil(log2 n) rounds",
                    "any world size, any root, any count; inner ranks stage their subtree in scratch", &run},
                    {.simplicity_rank = 40});

}  // namespace
}  // namespace collbench::scatter_tree
