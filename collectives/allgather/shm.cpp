// Zero-copy allgather in one node's peer memory: no messages. Every rank's block is readable
// by its peers — the user's send when buffers are registered (allocated in peer memory), else
// a staging copy in a scratch block — and after one flag round every rank copies every peer's
// block straight into its recv. Memory traffic per rank for M = n*count bytes of output:
//   registered: reads and writes (n-1)M/n;  staged: + copy-in of M/n.
// Flags: transport/peer_memory.hpp.
#include "collectives/registry.hpp"
#include "collectives/schedules/peer.hpp"

namespace collbench {
namespace {

constexpr std::uint64_t kInputsReady = 1;

double traffic(int n, const CollArgs& a, bool reg);

// Staged on 2 ranks, each rank is the peer's stage's one reader: claimed (schedules/peer.hpp).
// Registered, the blocks are the users' sends: never claimed.
bool claiming(const PeerMemory& pm, int n, const CollArgs& a, bool reg) {
  return !reg && n == 2 && schedules::peer::claims(pm, traffic(n, a, reg));
}

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  const std::size_t block = a.bytes(a.count);
  MemorySpace& m = t.memory();
  auto recv_block = [&](int k) { return elem_ptr(a.recv, static_cast<std::size_t>(k) * a.count, a.dtype); };
  if (n == 1) {
    m.copy(a.recv, a.send, block);  // a no-op in place
    return;
  }
  PeerMemory& pm = schedules::peer::memory_for(t, "allgather/shm");
  if (block == 0) return;  // every rank agrees
  // In place the block is recv's block r (send = recv + r*count): peers read only that block
  // and this rank writes only the others, so the registered path needs no staging in place.
  // Rank k's block is then at recv + k*count in k's segment, not at this rank's send offset;
  // every rank calls in place or none (MPI_IN_PLACE's rule), so the translation is uniform.
  const bool in_place = a.send == recv_block(r);
  const bool reg = schedules::peer::registered(pm, a, block, block * static_cast<std::size_t>(n));
  void* stage = reg ? nullptr : pm.scratch("allgather/shm", block);
  const bool claim = claiming(pm, n, a, reg);
  const std::uint64_t base = pm.begin_call();
  if (!reg) m.copy(stage, a.send, block);
  pm.raise(base + kInputsReady);
  m.copy(recv_block(r), a.send, block);  // a no-op in place; overlaps the peers' staging
  auto peer_block = [&](int k) -> const void* {
    if (!reg) return pm.peer(stage, k);
    return in_place ? elem_ptr(pm.peer(a.recv, k), static_cast<std::size_t>(k) * a.count, a.dtype) : pm.peer(a.send, k);
  };
  for (int i = 1; i < n; ++i) {  // staggered: rank r starts with r + 1, so blocks are read evenly
    const int k = (r + i) % n;
    pm.wait(k, base + kInputsReady);
    schedules::peer::copy_claiming(m, claim, recv_block(k), peer_block(k), block);
  }
  // Registered: peers read this rank's send, which the caller owns once this returns.
  pm.end_call(base, reg);
}

// Bytes one rank loads + stores (M = one block): n blocks copied into recv (2nM; in place the
// own one is not, but efficiency is not reported in place); staged adds the copy-in (2M).
double traffic(int n, const CollArgs& a, bool reg) {
  const double m = static_cast<double>(a.bytes(a.count));
  return 2 * n * m + (reg ? 0 : 2 * m);
}

COLLBENCH_REGISTER({Op::allgather, "shm", "any",
                    "zero-copy in node peer memory: each rank copies every peer's block straight into its recv, one "
                    "flag round",
                    "ranks on one node; host, or device memory over CUDA IPC (--backend mpi); registered buffers "
                    "(--buffers registered) skip the staging copy",
                    &run, nullptr, &traffic}, {.peer_memory = true, .simplicity_rank = 90, .claims = &claiming});

}  // namespace
}  // namespace collbench
