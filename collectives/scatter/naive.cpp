// Naive scatter: the root sends every rank its block straight from send, all at once.
// The root's link carries (n-1) × count in n-1 messages.
#include <vector>

#include "collectives/registry.hpp"

namespace collbench {
namespace {

constexpr int kTag = 230;

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  if (a.count == 0) return;
  if (me != a.root) {
    t.recv(a.recv, bytes, a.root, kTag);
    return;
  }
  std::vector<Request> rs;
  rs.reserve(n - 1);
  for (int p = 0; p < n; ++p)
    if (p != me) rs.push_back(t.isend(elem_ptr(a.send, p * a.count, a.dtype), bytes, p, kTag));
  t.memory().copy(a.recv, elem_ptr(a.send, me * a.count, a.dtype), bytes);  // no-op in place
  t.wait_all(rs);
}

COLLBENCH_REGISTER({Op::scatter, "naive", "any", "the root sends every rank its block (n-1 concurrent sends)",
                    "any world size, any root, any count", &run});

}  // namespace
}  // namespace collbench
