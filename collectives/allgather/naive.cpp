// Naive allgather: every rank sends its block to every other rank and receives theirs, all
// 2(n-1) messages in flight at once. Optimal volume, but n-1 messages per rank and no
// control over contention: the baseline the ring and recursive doubling beat.
#include <vector>

#include "collectives/registry.hpp"

namespace collbench {
namespace {

constexpr int kTag = 330;

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  t.memory().copy(elem_ptr(a.recv, me * a.count, a.dtype), a.send, bytes);  // a no-op in place
  if (bytes == 0) return;
  std::vector<Request> rs;
  rs.reserve(2 * (n - 1));
  // The i-th send of every rank goes to a different peer (me+i), matched by receives from me-i.
  for (int i = 1; i < n; ++i) {
    const int p = (me - i + n) % n;
    rs.push_back(t.irecv(elem_ptr(a.recv, p * a.count, a.dtype), bytes, p, kTag));
  }
  for (int i = 1; i < n; ++i) rs.push_back(t.isend(a.send, bytes, (me + i) % n, kTag));
  t.wait_all(rs);
}

COLLBENCH_REGISTER({Op::allgather, "naive", "any",
                    "every rank sends its block to every other rank (2(n-1) messages in flight)",
                    "any world size, any count", &run});

}  // namespace
}  // namespace collbench
