// Naive gather: every rank sends its block to the root, which receives all n-1 at once
// straight into their places in recv. The root's link carries (n-1) × count in n-1 messages.
#include <vector>

#include "collectives/registry.hpp"

namespace collbench {
namespace {

constexpr int kTag = 220;

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  if (a.count == 0) return;
  if (me != a.root) {
    t.send(a.send, bytes, a.root, kTag);
    return;
  }
  std::vector<Request> rs;
  rs.reserve(n - 1);
  for (int p = 0; p < n; ++p)
    if (p != me) rs.push_back(t.irecv(elem_ptr(a.recv, p * a.count, a.dtype), bytes, p, kTag));
  t.memory().copy(elem_ptr(a.recv, me * a.count, a.dtype), a.send, bytes);  // no-op in place
  t.wait_all(rs);
}

COLLBENCH_REGISTER({Op::gather, "naive", "any", "every rank sends its block to the root (n-1 concurrent receives)",
                    "any world size, any root, any count", &run});

}  // namespace
}  // namespace collbench
