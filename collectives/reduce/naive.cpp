// Naive reduce: every rank sends its whole buffer to the root, which receives all n-1 at
// once into scratch and folds each into recv as soon as it has arrived (the first fold reads
// the root's own send buffer, so nothing is copied). The root's link and its reduce kernel
// carry (n-1) × count: the baseline the tree beats.
#include <vector>

#include "collectives/registry.hpp"

namespace collbench {
namespace {

constexpr int kTag = 210;

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  if (a.count == 0) return;  // nothing to move (every rank agrees)
  if (me != a.root) {
    t.send(a.send, bytes, a.root, kTag);
    return;
  }
  if (n == 1) {
    t.memory().copy(a.recv, a.send, bytes);  // no-op in place
    return;
  }
  // Slot i holds the data of the i-th other rank.
  void* tmp = a.scratch(bytes * (n - 1));
  std::vector<Request> rs;
  rs.reserve(n - 1);
  for (int p = 0; p < n; ++p)
    if (p != me) rs.push_back(t.irecv(elem_ptr(tmp, rs.size() * a.count, a.dtype), bytes, p, kTag));
  const void* acc = a.send;  // recv = send (op) first, then recv (op)= the rest
  for (std::size_t i = 0; i < rs.size(); ++i) {
    t.wait(rs[i]);
    t.memory().reduce(a.op, a.recv, acc, elem_ptr(tmp, i * a.count, a.dtype), a.count);
    acc = a.recv;
  }
}

COLLBENCH_REGISTER({Op::reduce, "naive", "any",
                    "every rank sends to the root, which receives all at once and folds them into recv",
                    "any world size, any root, any count; root scratch (n-1) x count", &run});

}  // namespace
}  // namespace collbench
