// Naive allgather: every rank sends its block to every other rank and receives theirs, all
// 2(n-1) messages in flight at once. Optimal volume, but n-1 messages per rank and no
// control over contention: the baseline the ring and recursive doubling beat. Requests are
// posted in windows of kRequestWindow / 2 peers (all at once up to 17 ranks), so nothing is
// allocated per call.
#include <algorithm>
#include <array>

#include "collectives/registry.hpp"
#include "collectives/schedules/defaults.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::allgather_naive {
namespace {

constexpr int kWindow = schedules::kRequestWindow / 2;  // peers per window: a send and a receive each

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  t.memory().copy(elem_ptr(a.recv, me * a.count, a.dtype), a.send, bytes);  // a no-op in place
  if (bytes == 0) return;
  // The i-th send of every rank goes to a different peer (me+i), matched by receives from
  // me-i. Every rank walks the same windows of i, so a window's messages all match within it.
  std::array<Request, 2 * kWindow> rs{};
  for (int first = 1; first < n; first += kWindow) {
    const int last = std::min(n, first + kWindow);
    std::size_t k = 0;
    for (int i = first; i < last; ++i) {
      const int p = (me - i + n) % n;
      rs[k++] = t.irecv(elem_ptr(a.recv, p * a.count, a.dtype), bytes, p, tag::data);
    }
    for (int i = first; i < last; ++i) rs[k++] = t.isend(a.send, bytes, (me + i) % n, tag::data);
    t.wait_all(std::span(rs.data(), k));
  }
}

COLLBENCH_REGISTER({Op::allgather, "naive", "any",
                    "every rank sends its block to every other rank (2(n-1) messages in flight)",
                    "any world size, any count", &run}, {.simplicity_rank = 20});

}  // namespace
}  // namespace collbench::allgather_naive
