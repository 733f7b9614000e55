// Ring allgather: n-1 steps; at each a rank forwards the block it received last to the
// next rank. Each rank sends and receives (n-1)/n of the result, the bandwidth optimum, in
// pipelined segments received straight into place (ring_phases.cpp).
#include "collectives/allreduce/ring_phases.hpp"
#include "collectives/registry.hpp"

namespace collbench {
namespace {

constexpr int kTag = 340;

void run(Transport& t, const CollArgs& a) {
  const int me = t.rank();
  t.memory().copy(elem_ptr(a.recv, me * a.count, a.dtype), a.send, a.bytes(a.count));  // a no-op in place
  ring::allgather(t, a, {t.size(), a.count, true}, a.recv, kTag);
}

COLLBENCH_REGISTER({Op::allgather, "ring", "any",
                    "pipelined ring: n-1 steps forwarding the last received block, (n-1)/n of the data per rank",
                    "any world size, any count", &run});

}  // namespace
}  // namespace collbench
