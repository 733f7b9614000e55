// Naive reduce: every rank sends its whole buffer to the root, which receives from all n-1
// at once and folds each contribution into recv as it arrives (the first fold reads the
// root's own send buffer, so nothing is copied). The root's link and its reduce kernel carry
// (n-1) × count: the baseline the tree beats.
// The root's scratch is bounded by segments, not by the message: it takes the message in
// units (segment k of peer i, segment-major) through a ring of `window` receive slots, so up
// to two rounds of one segment from every peer are in flight while one is folded. A message
// of one segment — the small, latency-bound case this algorithm is about — is still one
// message per peer, all in flight at once.
#include <algorithm>
#include <array>

#include "collectives/registry.hpp"
#include "collectives/schedules/defaults.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::reduce_naive {
namespace {

constexpr int kMaxWindow = schedules::kRequestWindow;

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  if (a.count == 0) return;  // nothing to move (every rank agrees)
  if (n == 1) {
    t.memory().copy(a.recv, a.send, a.bytes(a.count));  // no-op in place
    return;
  }
  const std::size_t seg = std::min(a.count, schedules::segment_elems(a, schedules::kPipelineSegmentBytes));
  const long nseg = static_cast<long>((a.count + seg - 1) / seg);
  auto seg_count = [&](long k) { return std::min(seg, a.count - k * seg); };

  if (me != a.root) {  // segments in order, kSegmentsInFlight sends outstanding
    constexpr long kDepth = schedules::kSegmentsInFlight;
    std::array<Request, kDepth> sq{};
    for (long k = 0; k < nseg; ++k) {
      t.wait(sq[k % kDepth]);
      sq[k % kDepth] = t.isend(elem_ptr(a.send, k * seg, a.dtype), a.bytes(seg_count(k)), a.root, tag::data);
    }
    for (Request& r : sq) t.wait(r);
    return;
  }

  // Unit u = segment u / peers of the (u % peers)-th other rank, in receive slot u % window.
  const long peers = n - 1, units = nseg * peers;
  const long window = std::min<long>({units, 2 * peers, kMaxWindow});
  void* slots = a.scratch(a.bytes(window * seg));
  std::array<Request, kMaxWindow> rq{};
  auto slot = [&](long u) { return elem_ptr(slots, (u % window) * seg, a.dtype); };
  auto post = [&](long u) {
    const int i = static_cast<int>(u % peers), peer = i < me ? i : i + 1;
    rq[u % window] = t.irecv(slot(u), a.bytes(seg_count(u / peers)), peer, tag::data);
  };
  for (long u = 0; u < window; ++u) post(u);
  for (long u = 0; u < units; ++u) {
    const long k = u / peers;
    t.wait(rq[u % window]);
    void* out = elem_ptr(a.recv, k * seg, a.dtype);
    const void* acc = u % peers == 0 ? elem_ptr(a.send, k * seg, a.dtype) : out;  // recv = send (op) first
    t.memory().reduce(a.op, out, acc, slot(u), seg_count(k));
    if (u + window < units) post(u + window);  // into the slot just folded
  }
}

COLLBENCH_REGISTER({Op::reduce, "naive", "any",
                    "every rank sends to the root, which receives from all at once and folds them into recv",
                    "any world size, any root, any count; root scratch min(2(n-1), 32) segments (default 256 KiB)",
                    &run}, {.simplicity_rank = 20});

}  // namespace
}  // namespace collbench::reduce_naive
