// Pairwise-exchange alltoall: n-1 steps; in step s a rank sends block (rank+s) to rank+s
// and receives block (rank-s) from rank-s, both in flight at once. Each rank has exactly one
// message in and one out per step, so no link or receiver is oversubscribed (unlike posting
// all n-1 at once), at the price of n-1 latencies.
// In place (send == recv), block (rank-s) would be overwritten in step s but is only sent in
// step n-s. So in place the partner of step s is (s - rank) mod n instead: both ranks of a
// pair swap the *same* block position (each sends its block for the other and receives the
// other's block for it), segment by segment through a two-segment buffer. Still one partner
// per step and n-1 exchanges per rank (over n steps: a rank sits out the step it would pair
// with itself), and scratch bounded by the segment rather than n × count.
#include <algorithm>
#include <array>

#include "collectives/patterns/ring.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/defaults.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::alltoall_pairwise {
namespace {

// Swaps `blk` (count elements) with the same block of `peer`, who runs the same loop.
void swap_block(Transport& t, const CollArgs& a, void* blk, int peer, void* slots, std::size_t seg) {
  const std::size_t nseg = (a.count + seg - 1) / seg;
  auto len = [&](std::size_t k) { return a.bytes(std::min(seg, a.count - k * seg)); };
  auto slot = [&](std::size_t k) { return elem_ptr(slots, (k % 2) * seg, a.dtype); };
  std::array<Request, 2> rq{}, sq{};
  auto post = [&](std::size_t k) {  // segment k of our block is still ours until its copy below
    rq[k % 2] = t.irecv(slot(k), len(k), peer, tag::exchange);
    sq[k % 2] = t.isend(elem_ptr(blk, k * seg, a.dtype), len(k), peer, tag::exchange);
  };
  post(0);
  for (std::size_t k = 0; k < nseg; ++k) {
    if (k + 1 < nseg) post(k + 1);  // its slot held segment k - 1, already copied out
    t.wait(rq[k % 2]);
    t.wait(sq[k % 2]);
    t.memory().copy(elem_ptr(blk, k * seg, a.dtype), slot(k), len(k));
  }
}

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), me = t.rank();
  if (a.count == 0) return;
  const std::size_t bytes = a.bytes(a.count);
  auto block = [&](auto* base, int r) { return elem_ptr(base, r * a.count, a.dtype); };
  if (a.send != a.recv) {
    t.memory().copy(block(a.recv, me), block(a.send, me), bytes);  // own block
    for (int s = 1; s < n; ++s) {
      const int to = patterns::mod(me + s, n), from = patterns::mod(me - s, n);
      t.sendrecv(block(a.send, to), bytes, to, block(a.recv, from), bytes, from, tag::exchange);
    }
    return;
  }
  if (n == 1) return;
  const std::size_t seg = std::min(a.count, schedules::segment_elems(a, schedules::kPipelineSegmentBytes));
  void* slots = a.scratch(a.bytes(seg < a.count ? 2 * seg : seg));
  for (int s = 0; s < n; ++s) {
    const int peer = patterns::mod(s - me, n);
    if (peer != me) swap_block(t, a, block(a.recv, peer), peer, slots, seg);
  }
}

COLLBENCH_REGISTER({Op::alltoall, "pairwise", "any",
                    "n-1 steps; step s sends to rank+s and receives from rank-s (one sendrecv per step)",
                    "any world size, any count; in place swaps blocks through 2 segments (default 256 KiB) of "
                    "scratch",
                    &run}, {.simplicity_rank = 70});

}  // namespace
}  // namespace collbench::alltoall_pairwise
