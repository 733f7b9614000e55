// Naive broadcast: the root sends the whole buffer to every other rank, all at once
// (schedules/star.hpp: n-1 sends in flight, the root's local copy overlapping them). Time
// grows linearly with n: the baseline the trees beat.
#include "collectives/registry.hpp"
#include "collectives/schedules/star.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::broadcast_naive {
namespace {

void run(Transport& t, const CollArgs& a) {
  const std::size_t bytes = a.bytes(a.count);
  if (t.rank() != a.root) {
    t.recv(a.recv, bytes, a.root, tag::data);
    return;
  }
  schedules::star::at_root(
      t, [&](int p) { return t.isend(a.send, bytes, p, tag::data); },
      [&] { t.memory().copy(a.recv, a.send, bytes); });  // a no-op in place
}

COLLBENCH_REGISTER({Op::broadcast, "naive", "any", "root sends the whole buffer to every rank (n-1 concurrent sends)",
                    "any world size, any root, any count", &run}, {.simplicity_rank = 20});

}  // namespace
}  // namespace collbench::broadcast_naive
