// Naive broadcast: the root sends the whole buffer to every other rank, all at once
// (n-1 sends in flight). Time grows linearly with n: the baseline the trees beat.
#include <vector>

#include "collectives/registry.hpp"

namespace collbench {
namespace {

constexpr int kTag = 100;

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  if (me != a.root) {
    t.recv(a.recv, bytes, a.root, kTag);
    return;
  }
  t.memory().copy(a.recv, a.send, bytes);
  std::vector<Request> rs;
  rs.reserve(n - 1);
  for (int p = 0; p < n; ++p)
    if (p != me) rs.push_back(t.isend(a.recv, bytes, p, kTag));
  t.wait_all(rs);
}

COLLBENCH_REGISTER({Op::broadcast, "naive", "any", "root sends the whole buffer to every rank (n-1 concurrent sends)",
                    "any world size, any root, any count", &run});

}  // namespace
}  // namespace collbench
