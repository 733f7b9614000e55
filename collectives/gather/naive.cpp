// Naive gather: every rank sends its block to the root, which receives all n-1 at once
// (schedules/star.hpp) straight into their places in recv. The root's link carries
// (n-1) × count in n-1 messages.
#include "collectives/registry.hpp"
#include "collectives/schedules/star.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::gather_naive {
namespace {

void run(Transport& t, const CollArgs& a) {
  const std::size_t bytes = a.bytes(a.count);
  if (a.count == 0) return;
  if (t.rank() != a.root) {
    t.send(a.send, bytes, a.root, tag::data);
    return;
  }
  auto block = [&](int r) { return elem_ptr(a.recv, r * a.count, a.dtype); };
  schedules::star::at_root(
      t, [&](int p) { return t.irecv(block(p), bytes, p, tag::data); },
      [&] { t.memory().copy(block(a.root), a.send, bytes); });  // a no-op in place
}

COLLBENCH_REGISTER({Op::gather, "naive", "any", "every rank sends its block to the root (n-1 concurrent receives)",
                    "any world size, any root, any count", &run}, {.simplicity_rank = 20});

}  // namespace
}  // namespace collbench::gather_naive
