// Butterfly (recursive doubling) allreduce: log2(pof2) steps; at step s each rank swaps its
// whole current result with the rank 2^s away (both directions in flight) and reduces.
// Fewest steps, but the full buffer moves every step: made for small, latency-bound messages.
// A world that is not a power of two is folded first (patterns/recursive_doubling.hpp):
// the extra ranks hand their data to a neighbour, wait, and get the result at the end
// (2 more steps).
#include <array>

#include "collectives/allreduce/folded.hpp"
#include "collectives/patterns/recursive_doubling.hpp"
#include "collectives/registry.hpp"

namespace collbench {
namespace {

constexpr int kTagFold = 310;
constexpr int kTagExchange = 311;
constexpr int kTagUnfold = 312;

void run(Transport& t, const CollArgs& a) {
  const int me = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  const patterns::Fold f(t.size());
  allreduce::run_folded(t, a, f, {kTagFold, kTagUnfold}, [&](const void* acc, void* tmp) {
    for (int s = 0; s < f.steps(); ++s) {
      const int peer = f.partner(me, patterns::doubling_mask(s));
      std::array<Request, 2> rs{t.irecv(tmp, bytes, peer, kTagExchange), t.isend(acc, bytes, peer, kTagExchange)};
      t.wait_all(rs);
      t.memory().reduce(a.op, a.recv, acc, tmp, a.count);
      acc = a.recv;
    }
  });
}

COLLBENCH_REGISTER({Op::allreduce, "butterfly", "any",
                    "recursive doubling: log2(n) full-buffer exchanges (+2 folding steps if n is not a power of 2)",
                    "any world size (non-powers of two folded), any count", &run});

}  // namespace
}  // namespace collbench
