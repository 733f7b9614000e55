#pragma once
// The non-power-of-two wrapper shared by the recursive-doubling allreduces (butterfly,
// Rabenseifner), MPICH's scheme from patterns/recursive_doubling.hpp: each folded rank hands
// its input to its partner and later gets the result back; the partner starts from
// input (+) folded input; the pof2 active ranks run the power-of-two core in between.
#include "collectives/patterns/recursive_doubling.hpp"
#include "collectives/registry.hpp"

namespace collbench::allreduce {

struct FoldTags {
  int fold;
  int unfold;
};

// Calls core(acc, tmp) on the active ranks. `acc` is the rank's running result — the input
// until the first reduction writes recv, so no initial copy of send into recv is needed —
// and `tmp` a full-size scratch buffer (slot 0). The core must leave the result in recv.
template <class Core>
void run_folded(Transport& t, const CollArgs& a, const patterns::Fold& f, FoldTags tags, Core&& core) {
  const int me = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  if (f.n == 1) t.memory().copy(a.recv, a.send, bytes);
  if (f.n == 1 || bytes == 0) return;
  if (f.folded(me)) {
    t.send(a.send, bytes, f.fold_partner(me), tags.fold);
    t.recv(a.recv, bytes, f.fold_partner(me), tags.unfold);
    return;
  }
  void* tmp = a.scratch(bytes, 0);
  const void* acc = a.send;
  if (f.absorbs(me)) {
    t.recv(tmp, bytes, f.fold_partner(me), tags.fold);
    t.memory().reduce(a.op, a.recv, acc, tmp, a.count);
    acc = a.recv;
  }
  core(acc, tmp);
  if (f.absorbs(me)) t.send(a.recv, bytes, f.fold_partner(me), tags.unfold);
}

}  // namespace collbench::allreduce
