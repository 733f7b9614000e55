// Recursive doubling allgather: log2(pof2) steps; at step s each rank swaps everything it
// has gathered so far (an aligned group of 2^s ranks' blocks, contiguous in recv) with the
// rank 2^s away, doubling it. Few steps with the optimal volume when n is a power of two.
//
// Other world sizes are folded (schedules/fold.hpp): the first 2·rem ranks pair up, the
// even one of each pair sends its block to the odd one and sits out, and the odd one then
// carries both blocks. Because every surviving rank carries a contiguous, increasing run of
// ranks, each exchange is still one contiguous range of recv. At the end the odd ranks send
// the whole result to their partners: 2 extra steps and n·count more bytes on those links.
// (Bruck's algorithm avoids that extra traffic but needs a final local rotation of the whole
// buffer; the fold keeps the data in place and the code shared with the other recursive
// doubling algorithms.) No scratch.
#include <utility>

#include "collectives/patterns/recursive_doubling.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/fold.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::allgather_recursive_doubling {
namespace {

void run(Transport& t, const CollArgs& a) {
  const int me = t.rank();
  const std::size_t block = a.bytes(a.count);
  const patterns::Fold f(t.size());
  t.memory().copy(elem_ptr(a.recv, me * a.count, a.dtype), a.send, block);  // a no-op in place
  if (f.n == 1 || block == 0) return;

  // An absorbing rank receives its partner's block straight into its place in recv.
  const int partner = f.fold_partner(me);
  void* landing = partner < 0 ? nullptr : elem_ptr(a.recv, partner * a.count, a.dtype);
  schedules::fold::around(t, f, {a.send, block, a.recv, f.n * block, landing}, [&](bool) {
    // The blocks of newranks [g.first, g.last), as a contiguous range of recv.
    auto bytes_of = [&](patterns::BlockRange g) {
      const int first = f.first_carried(g.first), last = f.first_carried(g.last);
      return std::pair{elem_ptr(a.recv, first * a.count, a.dtype), (last - first) * block};
    };
    const int j = f.newrank(me);
    for (int s = 0; s < f.steps(); ++s) {
      const int peer = f.partner(me, patterns::doubling_mask(s));
      const auto [mine, mine_bytes] = bytes_of(patterns::doubling_group(j, s));
      const auto [theirs, theirs_bytes] = bytes_of(patterns::doubling_group(j ^ patterns::doubling_mask(s), s));
      t.sendrecv(mine, mine_bytes, peer, theirs, theirs_bytes, peer, tag::exchange);
    }
  });
}

COLLBENCH_REGISTER({Op::allgather, "recursive_doubling", "any",
                    "recursive doubling: log2(n) exchanges of doubling block ranges (+2 fold steps if n is not 2^k)",
                    "any world size (non-powers of two folded), any count", &run}, {.simplicity_rank = 60});

}  // namespace
}  // namespace collbench::allgather_recursive_doubling
