// Naive broadcast: the root sends the whole buffer to every other rank, all at once
// (n-1 sends in flight, in windows of kWindow so that nothing is allocated per call). Time
// grows linearly with n: the baseline the trees beat.
#include <array>

#include "collectives/registry.hpp"

namespace collbench {
namespace {

constexpr int kTag = 100;
constexpr int kWindow = 32;  // sends in flight at once: all of them up to 33 ranks

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  if (me != a.root) {
    t.recv(a.recv, bytes, a.root, kTag);
    return;
  }
  // Send from `send`, and make the local copy into `recv` while the first sends are in flight.
  std::array<Request, kWindow> rs{};
  std::size_t k = 0;
  bool copied = false;
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    rs[k++] = t.isend(a.send, bytes, p, kTag);
    if (k == rs.size()) {
      if (!copied) t.memory().copy(a.recv, a.send, bytes);  // a no-op in place
      copied = true;
      t.wait_all(rs);
      k = 0;
    }
  }
  if (!copied) t.memory().copy(a.recv, a.send, bytes);
  t.wait_all(std::span(rs.data(), k));
}

COLLBENCH_REGISTER({Op::broadcast, "naive", "any", "root sends the whole buffer to every rank (n-1 concurrent sends)",
                    "any world size, any root, any count", &run});

}  // namespace
}  // namespace collbench
