// Pairwise-exchange alltoall: n-1 steps; in step s a rank sends block (rank+s) to rank+s
// and receives block (rank-s) from rank-s, both in flight at once. Each rank has exactly one
// message in and one out per step, so no link or receiver is oversubscribed (unlike posting
// all n-1 at once), at the price of n-1 latencies.
// In place (send == recv), block (rank-s) is overwritten in step s but may only be sent in
// step n-s > s, so the outgoing blocks are staged in scratch first.
#include "collectives/patterns/ring.hpp"
#include "collectives/registry.hpp"

namespace collbench {
namespace {

constexpr int kTag = 240;

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  if (a.count == 0) return;
  const std::size_t bytes = a.bytes(a.count);
  const void* src = a.send;
  if (a.send == a.recv && n > 1) {
    void* stage = a.scratch(bytes * n);
    t.memory().copy(stage, a.send, bytes * n);
    src = stage;
  }
  auto block = [&](auto* base, int r) { return elem_ptr(base, r * a.count, a.dtype); };
  t.memory().copy(block(a.recv, me), block(a.send, me), bytes);  // own block; no-op in place
  for (int s = 1; s < n; ++s) {
    const int to = patterns::mod(me + s, n), from = patterns::mod(me - s, n);
    t.sendrecv(block(src, to), bytes, to, block(a.recv, from), bytes, from, kTag);
  }
}

COLLBENCH_REGISTER({Op::alltoall, "pairwise", "any",
                    "n-1 steps; step s sends to rank+s and receives from rank-s (one sendrecv per step)",
                    "any world size, any count; in place stages n x count in scratch", &run});

}  // namespace
}  // namespace collbench
