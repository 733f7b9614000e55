// Ring reduce-scatter: n-1 steps; at each a rank passes a partial sum of one block to the
// next rank, which adds its own contribution. Rank r ends with the reduced block r. Pipelined
// in segments (schedules/ring.cpp); partials live in a two-block scratch, the last step reduces
// straight into recv.
#include "collectives/registry.hpp"
#include "collectives/schedules/ring.hpp"

namespace collbench::reduce_scatter_ring {
namespace {

void run(Transport& t, const CollArgs& a) {
  if (t.size() == 1) {
    t.memory().copy(a.recv, a.send, a.bytes(a.count));  // a no-op in place
    return;
  }
  schedules::ring::reduce_scatter(t, a, {t.size(), a.count, true}, a.send, a.recv);
}

COLLBENCH_REGISTER({Op::reduce_scatter, "ring", "any",
                    "pipelined ring: n-1 steps, each rank sends (n-1)/n of the data and reduces it once",
                    "any world size, any count", &run}, {.simplicity_rank = 30});

}  // namespace
}  // namespace collbench::reduce_scatter_ring
