// Rabenseifner's allreduce: a reduce-scatter by recursive halving, then an allgather by
// recursive doubling that retraces it. Over pof2 (uneven) blocks of `count`, step s of the
// halving swaps half of what a rank holds with the rank 2^s away and reduces the half it
// keeps, so after log2(pof2) steps each rank owns one fully reduced block; the allgather
// swaps the same ranges back in reverse. 2·log2(pof2) steps moving 2(pof2-1)/pof2 of the
// data: the latency of the butterfly's step count with the ring's volume.
// A world that is not a power of two is folded first (schedules/fold.hpp): the extra ranks
// hand their data to a neighbour and get the result at the end.
#include <array>

#include "collectives/patterns/chunks.hpp"
#include "collectives/patterns/recursive_doubling.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/fold.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::allreduce_rabenseifner {
namespace {

// Both directions of one exchange in flight; an empty range is skipped on both sides
// (the partner computes the same range for its half).
void exchange(Transport& t, int peer, tag::Role role, const void* sbuf, std::size_t sbytes, void* rbuf, std::size_t rbytes) {
  std::array<Request, 2> rs{};
  if (rbytes) rs[0] = t.irecv(rbuf, rbytes, peer, role);
  if (sbytes) rs[1] = t.isend(sbuf, sbytes, peer, role);
  t.wait_all(rs);
}

void run(Transport& t, const CollArgs& a) {
  const int me = t.rank();
  const patterns::Fold f(t.size());
  schedules::fold::allreduce(t, a, f, [&](const void* acc, void* tmp) {
    const int j = f.newrank(me), P = f.pof2;
    auto elems = [&](patterns::BlockRange b) { return patterns::chunk_span(a.count, P, b.first, b.last); };

    for (int s = 0; s < f.steps(); ++s) {  // reduce-scatter by recursive halving
      const patterns::Range keep = elems(patterns::halving_keep(j, s, P)), give = elems(patterns::halving_send(j, s, P));
      exchange(t, f.partner(me, patterns::halving_mask(s)), tag::halving, elem_ptr(acc, give.offset, a.dtype),
               a.bytes(give.count), tmp, a.bytes(keep.count));
      t.memory().reduce(a.op, elem_ptr(a.recv, keep.offset, a.dtype), elem_ptr(acc, keep.offset, a.dtype), tmp,
                        keep.count);
      acc = a.recv;
    }
    for (int s = 0; s < f.steps(); ++s) {  // allgather by recursive doubling, straight into recv
      const patterns::Range mine = elems(patterns::unhalving_send(j, s, P)),
                            theirs = elems(patterns::unhalving_recv(j, s, P));
      exchange(t, f.partner(me, patterns::unhalving_mask(s, P)), tag::doubling, elem_ptr(a.recv, mine.offset, a.dtype),
               a.bytes(mine.count), elem_ptr(a.recv, theirs.offset, a.dtype), a.bytes(theirs.count));
    }
  });
}

COLLBENCH_REGISTER({Op::allreduce, "rabenseifner", "any",
                    "recursive-halving reduce-scatter + recursive-doubling allgather: 2 log2(n) steps, ring volume",
                    "any world size (non-powers of two folded, +2 steps), any count; scratch 1 x count", &run},
                    {.simplicity_rank = 80});

}  // namespace
}  // namespace collbench::allreduce_rabenseifner
