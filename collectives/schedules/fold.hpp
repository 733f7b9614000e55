#pragma once
// Folding a world that is not a power of two into one that is (MPICH's scheme, topology in
// patterns/recursive_doubling.hpp), shared by every recursive-doubling algorithm: the extra
// ranks hand their input to a partner (tag::fold), sit out while the pof2 active ranks run
// the power-of-two core, and get the whole result back (tag::unfold). 2 more steps.
#include <cstddef>

#include "collectives/collective.hpp"
#include "collectives/patterns/recursive_doubling.hpp"
#include "collectives/schedules/tags.hpp"
#include "collectives/transport/transport.hpp"

namespace collbench::schedules::fold {

// What crosses a folding pair: the folded rank's input, and the result it gets back.
struct Ends {
  const void* in;
  std::size_t in_bytes;
  void* out;
  std::size_t out_bytes;
  void* landing;  // where an absorbing rank receives its partner's `in`
};

// Runs core(absorbed) on the active ranks; `absorbed` says the partner's input is at
// e.landing. A folded rank only sends e.in and receives e.out; an absorbing rank sends e.out
// once the core is done.
template <class Core>
void around(Transport& t, const patterns::Fold& f, const Ends& e, Core&& core) {
  const int me = t.rank(), partner = f.fold_partner(me);
  if (f.folded(me)) {
    t.send(e.in, e.in_bytes, partner, tag::fold);
    t.recv(e.out, e.out_bytes, partner, tag::unfold);
    return;
  }
  const bool absorbed = f.absorbs(me);
  if (absorbed) t.recv(e.landing, e.in_bytes, partner, tag::fold);
  core(absorbed);
  if (absorbed) t.send(e.out, e.out_bytes, partner, tag::unfold);
}

// The allreduce form (butterfly, Rabenseifner): calls core(acc, tmp) on the active ranks.
// `acc` is the rank's running result — the input until the first reduction writes recv, so
// no initial copy of send into recv is needed — and `tmp` a full-size scratch buffer
// (slot 0). The core must leave the result in recv. The message-sized tmp is the textbook
// algorithm (the butterfly swaps the whole buffer every step); with send and recv it stays
// within 3x the message.
template <class Core>
void allreduce(Transport& t, const CollArgs& a, const patterns::Fold& f, Core&& core) {
  const std::size_t bytes = a.bytes(a.count);
  if (f.n == 1) t.memory().copy(a.recv, a.send, bytes);
  if (f.n == 1 || bytes == 0) return;
  void* tmp = f.folded(t.rank()) ? nullptr : a.scratch(bytes, 0);
  around(t, f, {a.send, bytes, a.recv, bytes, tmp}, [&](bool absorbed) {
    const void* acc = a.send;
    if (absorbed) {
      t.memory().reduce(a.op, a.recv, acc, tmp, a.count);
      acc = a.recv;
    }
    core(acc, tmp);
  });
}

}  // namespace collbench::schedules::fold
