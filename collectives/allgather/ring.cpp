// Ring allgather: n-1 steps; at each a rank forwards the block it received last to the
// next rank. Each rank sends and receives (n-1)/n of the result, the bandwidth optimum, in
// pipelined segments received straight into place (schedules/ring.cpp).
#include <array>

#include "collectives/registry.hpp"
#include "collectives/schedules/ring.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::allgather_ring {
namespace {

void run(Transport& t, const CollArgs& a) {
  const int me = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  if (t.size() == 2 && a.segment_bytes == 0 && bytes) {
    // The ring of two is one exchange: nothing to pipeline, so one message each way (256 KiB-
    // 512 KiB segments measured slower), sent from `send` while the local block is copied.
    const int peer = 1 - me;
    std::array<Request, 2> rs{t.irecv(elem_ptr(a.recv, peer * a.count, a.dtype), bytes, peer, tag::exchange),
                              t.isend(a.send, bytes, peer, tag::exchange)};
    t.memory().copy(elem_ptr(a.recv, me * a.count, a.dtype), a.send, bytes);  // a no-op in place
    t.wait_all(rs);
    return;
  }
  t.memory().copy(elem_ptr(a.recv, me * a.count, a.dtype), a.send, bytes);  // a no-op in place
  schedules::ring::allgather(t, a, {t.size(), a.count, true}, a.recv);
}

COLLBENCH_REGISTER({Op::allgather, "ring", "any",
                    "pipelined ring: n-1 steps forwarding the last received block, (n-1)/n of the data per rank",
                    "any world size, any count", &run}, {.simplicity_rank = 30});

}  // namespace
}  // namespace collbench::allgather_ring
