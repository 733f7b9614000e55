// Butterfly (recursive doubling) allreduce: log2(pof2) steps; at step s each rank swaps its
// whole current result with the rank 2^s away (both directions in flight) and reduces.
// Fewest steps, but the full buffer moves every step: made for small, latency-bound messages.
// A world that is not a power of two is folded first (schedules/fold.hpp): the extra ranks
// hand their data to a neighbour, wait, and get the result at the end (2 more steps).
#include "collectives/patterns/recursive_doubling.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/fold.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::allreduce_butterfly {
namespace {

void run(Transport& t, const CollArgs& a) {
  const int me = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  const patterns::Fold f(t.size());
  schedules::fold::allreduce(t, a, f, [&](const void* acc, void* tmp) {
    for (int s = 0; s < f.steps(); ++s) {
      const int peer = f.partner(me, patterns::doubling_mask(s));
      t.sendrecv(acc, bytes, peer, tmp, bytes, peer, tag::exchange);
      t.memory().reduce(a.op, a.recv, acc, tmp, a.count);
      acc = a.recv;
    }
  });
}

COLLBENCH_REGISTER({Op::allreduce, "butterfly", "any",
                    "recursive doubling: log2(n) full-buffer exchanges (+2 folding steps if n is not a power of 2)",
                    "any world size (non-powers of two folded), any count; scratch 1 x count", &run},
                    {.simplicity_rank = 50});

}  // namespace
}  // namespace collbench::allreduce_butterfly
