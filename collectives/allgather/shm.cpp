// Zero-copy allgather in one node's peer memory: no messages. Every rank's block is readable
// by its peers — the user's send when buffers are registered (allocated in peer memory), else
// a staging copy in a scratch block — and after one flag round every rank copies every peer's
// block straight into its recv. Staged, the blocks go in rounds of at most stage_bytes() of each,
// so a round's stage is still in its owner's cache when the peers read it; or, from the size the
// run measured it faster (schedules::peer::kernel_copies), each rank reads the peers' user sends
// by the kernel's single copy instead, as registered buffers are read. Memory traffic per rank
// for M = n*count bytes of output:
//   registered and kernel copy: reads and writes (n-1)M/n;  staged: + copy-in of M/n.
// Flags: transport/peer_memory.hpp.
#include <algorithm>
#include <cstring>

#include "collectives/registry.hpp"
#include "collectives/schedules/peer.hpp"

namespace collbench::allgather_shm {
namespace {

constexpr std::uint64_t kInputsReady = 1;

double traffic(int n, const CollArgs& a, bool reg);

// Staged on 2 ranks, each rank is the peer's stage's one reader: claimed, by one round's
// traffic (schedules/peer.hpp). Registered, the blocks are the users' sends: never claimed.
// Staged blocks the run measured faster read by the kernel: nothing is staged or claimed. The
// copies into recv this rank makes stream where the run measured that faster for the whole recv
// (schedules::peer::streams); the kernel's copies cannot.
ClaimChoice claiming(const PeerMemory& pm, int n, const CollArgs& a, bool reg) {
  const bool stream = schedules::peer::streams(pm, a.bytes(a.count) * static_cast<std::size_t>(n));
  if (!reg && schedules::peer::kernel_copies(pm, a.bytes(a.count))) return {.kernel_copy = true, .streams = stream};
  const double traffic_bytes = traffic(n, schedules::peer::first_round(a, schedules::peer::stage_step(pm, a)), reg);
  const bool claims = !reg && n == 2 && schedules::peer::claims(pm, traffic_bytes);
  // Only a claimed copy goes by segments.
  return {claims, traffic_bytes, false, claims ? schedules::peer::segment_bytes(pm, a) : 0, stream};
}

// One staged round: elements [off, off + len) of every rank's block, through a stage of len
// elements; a call of its own (begin_call .. end_call), as schedules::peer::in_rounds' rounds.
// Whole blocks staged at once left the stage in memory beyond the cache: at 8-16 MiB (2 ranks)
// 0.95-0.99x the library, in rounds of 1 MiB 1.12-1.37x (bench/README.md).
void staged_round(PeerMemory& pm, MemorySpace& m, const CollArgs& a, std::size_t off, std::size_t len, bool claim,
                  bool stream) {
  const int n = pm.size(), r = pm.rank();
  const std::size_t bytes = a.bytes(len);
  void* stage = pm.scratch("allgather/shm", bytes);  // collective: on every rank
  auto at = [&](int k) { return elem_ptr(a.recv, static_cast<std::size_t>(k) * a.count + off, a.dtype); };
  const void* src = elem_ptr(a.send, off, a.dtype);  // in place: at(r)
  const std::uint64_t base = pm.begin_call();
  m.copy(stage, src, bytes);
  pm.raise(base + kInputsReady);
  schedules::peer::copy_out(m, stream, at(r), src, bytes);  // a no-op in place; overlaps the peers' staging
  for (int i = 1; i < n; ++i) {  // staggered: rank r starts with r + 1, so blocks are read evenly
    const int k = (r + i) % n;
    pm.wait(k, base + kInputsReady);
    schedules::peer::copy_claiming(pm, m, a, claim, at(k), pm.peer(stage, k), bytes, stream);
  }
  pm.end_call(base, false);  // only the stage was read
}

// Unregistered blocks by the kernel's single copy: every rank posts its send's address with its
// flag and reads each peer's send straight into its recv, one copy as registered blocks are
// read, where staging is a copy-in and a load of lines the peer has just written. On the 2-vCPU
// Xeon VM, 2 ranks, against the staged rounds: 0.55x the time at 128 KiB, 0.8-0.9x at 512 KiB -
// 16 MiB (bench/README.md).
void kernel_copy(Transport& t, PeerMemory& pm, const CollArgs& a, bool stream) {
  const int n = pm.size(), r = pm.rank();
  const std::size_t block = a.bytes(a.count);
  auto at = [&](int k) { return elem_ptr(a.recv, static_cast<std::size_t>(k) * a.count, a.dtype); };
  const std::uint64_t base = pm.begin_call();
  schedules::peer::post_user_buffer(pm, base, a.send);  // in place: recv's block r, which nobody writes
  pm.raise(base + kInputsReady);
  for (int i = 1; i < n; ++i) {  // staggered, as the staged rounds
    const int k = (r + i) % n;
    pm.wait(k, base + kInputsReady);
    schedules::peer::read_user_buffer(t, "allgather/shm", k, schedules::peer::user_buffer(pm, k, base), 0, at(k),
                                      block);
  }
  // Last, as the library's two-rank allgather: 2 ranks, 1-4 MiB, 1.03-1.04x the library against
  // 0.98-1.03x with this copy first (two alternated runs each).
  schedules::peer::copy_out(t.memory(), stream, at(r), a.send, block);  // a no-op in place
  pm.end_call(base, true);  // peers read this rank's send, which the caller owns once this returns
}

// Blocks up to PeerMemory::kMaxWordBytes (schedules::peer::words_fit): every rank's block travels
// in words that carry its flag value, whose lines move together (2 ranks, Xeon VM, staged: 8 B
// 0.91-0.98x the library with a flag and a stage, 1.76x in one word; 32-256 B in all 0.92-1.05x
// with 8-byte words, 1.17-1.77x with 128-byte ones; bench/README.md).
void small_words(Transport& t, PeerMemory& pm, const CollArgs& a) {
  const std::size_t block = a.bytes(a.count);
  schedules::peer::PerRank<schedules::peer::Words> words(t.size());
  const std::uint64_t base = schedules::peer::exchange_words(pm, a.send, block, words);
  for (int k = 0; k < t.size(); ++k)  // in place too: block r is already there, and equal
    std::memcpy(elem_ptr(a.recv, static_cast<std::size_t>(k) * a.count, a.dtype),
                words[static_cast<std::size_t>(k)].data(), block);
  pm.end_alternating_call(base);
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
  if (schedules::peer::words_fit(pm, block)) return small_words(t, pm, a);
  // In place the block is recv's block r (send = recv + r*count): peers read only that block
  // and this rank writes only the others, so the registered path needs no staging in place.
  // Rank k's block is then at recv + k*count in k's segment, not at this rank's send offset;
  // every rank calls in place or none (MPI_IN_PLACE's rule), so the translation is uniform.
  const bool in_place = a.send == recv_block(r);
  if (!schedules::peer::registered(pm, a, block, block * static_cast<std::size_t>(n))) {
    const ClaimChoice c = claiming(pm, n, a, false);
    if (c.kernel_copy) return kernel_copy(t, pm, a, c.streams);
    const std::size_t step = schedules::peer::stage_step(pm, a);
    for (std::size_t off = 0; off < a.count; off += step)
      staged_round(pm, m, a, off, std::min(step, a.count - off), c.claims, c.streams);
    return;
  }
  const bool stream = claiming(pm, n, a, true).streams;
  const std::uint64_t base = pm.begin_call();
  pm.raise(base + kInputsReady);
  schedules::peer::copy_out(m, stream, recv_block(r), a.send, block);  // a no-op in place
  for (int i = 1; i < n; ++i) {  // staggered: rank r starts with r + 1, so blocks are read evenly
    const int k = (r + i) % n;
    pm.wait(k, base + kInputsReady);
    const void* peer_block =
        in_place ? elem_ptr(pm.peer(a.recv, k), static_cast<std::size_t>(k) * a.count, a.dtype) : pm.peer(a.send, k);
    schedules::peer::copy_out(m, stream, recv_block(k), peer_block, block);
  }
  // Peers read this rank's send, which the caller owns once this returns.
  pm.end_call(base, true);
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
                    "(--buffers registered) skip the staging copy, as larger unregistered ones do where the run "
                    "measured the kernel's single copy faster (CMA)",
                    &run, nullptr, &traffic}, {.peer_memory = true, .simplicity_rank = 90, .claims = &claiming});

}  // namespace
}  // namespace collbench::allgather_shm
