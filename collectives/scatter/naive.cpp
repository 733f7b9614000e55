// Naive scatter: the root sends every rank its block straight from send, all at once
// (schedules/star.hpp). The root's link carries (n-1) × count in n-1 messages.
#include "collectives/registry.hpp"
#include "collectives/schedules/star.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::scatter_naive {
namespace {

void run(Transport& t, const CollArgs& a) {
  const std::size_t bytes = a.bytes(a.count);
  if (a.count == 0) return;
  if (t.rank() != a.root) {
    t.recv(a.recv, bytes, a.root, tag::data);
    return;
  }
  auto block = [&](int r) { return elem_ptr(a.send, r * a.count, a.dtype); };
  schedules::star::at_root(
      t, [&](int p) { return t.isend(block(p), bytes, p, tag::data); },
      [&] { t.memory().copy(a.recv, block(a.root), bytes); });  // a no-op in place
}

COLLBENCH_REGISTER({Op::scatter, "naive", "any", "the root sends every rank its block (n-1 concurrent sends)",
                    "any world size, any root, any count", &run}, {.simplicity_rank = 20});

}  // namespace
}  // namespace collbench::scatter_naive
