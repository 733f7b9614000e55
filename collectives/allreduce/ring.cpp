// Ring allreduce: a ring reduce-scatter then a ring allgather over n chunks of `count`
// (sizes differ by at most one). Each rank sends and receives 2(n-1)/n of the data — the
// bandwidth optimum — and reduces each element of the n-1 chunks it does not start with
// exactly once. Both phases run as one pipeline of segments (schedules/ring.cpp): a segment
// whose reduction is final starts its allgather at once. Out of place, the first step sends
// from `send` and every reduction writes straight into `recv`: no copy of send into recv.
#include "collectives/registry.hpp"
#include "collectives/schedules/ring.hpp"

namespace collbench::allreduce_ring {
namespace {

void run(Transport& t, const CollArgs& a) {
  const int n = t.size();
  if (n == 1) {
    t.memory().copy(a.recv, a.send, a.bytes(a.count));
    return;
  }
  schedules::ring::reduce_scatter_allgather(t, a, {n, a.count, false}, a.send, a.recv);
}

COLLBENCH_REGISTER({Op::allreduce, "ring", "any",
                    "ring reduce-scatter + allgather as one segment pipeline: 2(n-1) steps, 2(n-1)/n of the data",
                    "any world size, any count", &run}, {.simplicity_rank = 30});

}  // namespace
}  // namespace collbench::allreduce_ring
