// Zero-copy reduce-scatter in one node's peer memory: no messages. Rank r reduces block r
// straight from every rank's input into its own recv, which nobody else touches, so one flag
// round suffices. Inputs are the user's send when it is registered (allocated in peer
// memory), else a staging copy of the blocks peers need (all but the rank's own) in a scratch
// block. Memory traffic per rank for M = n*count bytes of input on n ranks:
//   registered: reads M/n from each of n inputs = M, writes M/n;  staged: + copy-in (n-1)M/n,
// in rounds of at most stage_bytes() so the stage stays bounded.
// Flags: transport/peer_memory.hpp.
#include <algorithm>

#include "collectives/registry.hpp"
#include "collectives/schedules/peer.hpp"

namespace collbench::reduce_scatter_shm {
namespace {

constexpr std::uint64_t kInputsReady = 1;

double traffic(int n, const CollArgs& a, bool reg);

// Elements of each block a staged round moves: stage_bytes() in all over the n blocks.
std::size_t round_step(const PeerMemory& pm, const CollArgs& a, int n) {
  return std::max<std::size_t>(1, schedules::peer::stage_step(pm, a) / static_cast<std::size_t>(n));
}

// Staged, only rank r reads block r's part of every peer's stage: claimed, by one round's
// traffic (schedules/peer.hpp). Registered, the inputs are the users' sends: never claimed.
ClaimChoice claiming(const PeerMemory& pm, int n, const CollArgs& a, bool reg) {
  const double traffic_bytes = traffic(n, schedules::peer::first_round(a, round_step(pm, a, n)), reg);
  return {!reg && schedules::peer::claims(pm, traffic_bytes), traffic_bytes, false,
          schedules::peer::segment_bytes(pm, a)};
}

// Staged: rounds over elements [off, off + k) of every block, at most stage_bytes() in all, so
// the stage stays bounded; block q's part sits at q*k in the stage.
void staged(Transport& t, PeerMemory& pm, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  const bool claim = claiming(pm, n, a, false).claims;
  const schedules::peer::ClaimPeers peers{r, n, r};
  const auto un = static_cast<std::size_t>(n), ur = static_cast<std::size_t>(r);
  MemorySpace& m = t.memory();
  const std::size_t step = round_step(pm, a, n);
  void* stage = pm.scratch("reduce_scatter/shm", a.bytes(std::min(step, a.count) * un));
  schedules::peer::RankPointers inputs(n);
  for (std::size_t off = 0; off < a.count; off += step) {
    const std::size_t k = std::min(step, a.count - off);
    const std::uint64_t base = pm.begin_call();
    for (std::size_t q = 0; q < un; ++q)  // block r is read only here, from send
      if (q != ur) m.copy(elem_ptr(stage, q * k, a.dtype), elem_ptr(a.send, q * a.count + off, a.dtype), a.bytes(k));
    pm.raise(base + kInputsReady);
    // Own input first: in place, recv is the own block r and is read before it is written.
    schedules::peer::peer_inputs(pm, stage, a.send, base + kInputsReady, r, inputs);
    inputs[0] = elem_ptr(a.send, ur * a.count + off, a.dtype);
    for (std::size_t i = 1; i < un; ++i) inputs[i] = elem_ptr(inputs[i], ur * k, a.dtype);
    schedules::peer::reduce_inputs(pm, m, a, elem_ptr(a.recv, off, a.dtype), inputs, k, claim ? &peers : nullptr);
    pm.end_call(base, false);  // only peer memory was read
  }
}

// Inputs up to PeerMemory::kMaxWordBytes (schedules::peer::words_fit): every rank's whole input
// travels in words that carry its flag value, and each rank reduces its block from the words (2
// ranks, Xeon VM, staged: 8 B 0.99-1.10x the library before, 1.88x in one word; 16-128 B
// 0.97-1.08x with 8-byte words, 1.42-1.95x with 128-byte ones; bench/README.md).
void small_words(Transport& t, PeerMemory& pm, const CollArgs& a) {
  const int n = t.size();
  const std::size_t total = a.bytes(a.count) * static_cast<std::size_t>(n);
  schedules::peer::PerRank<schedules::peer::Words> words(n);
  const std::uint64_t base = schedules::peer::exchange_words(pm, a.send, total, words);
  schedules::peer::RankPointers inputs(n);
  for (int k = 0; k < n; ++k)
    inputs[k] = elem_ptr(words[k].data(), static_cast<std::size_t>(t.rank()) * a.count, a.dtype);
  schedules::peer::reduce_inputs(pm, t.memory(), a, a.recv, inputs, a.count);
  pm.end_alternating_call(base);
}

void run(Transport& t, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  const std::size_t block = a.bytes(a.count), total = block * static_cast<std::size_t>(n);
  MemorySpace& m = t.memory();
  if (n == 1) {
    m.copy(a.recv, a.send, block);  // a no-op in place
    return;
  }
  PeerMemory& pm = schedules::peer::memory_for(t, "reduce_scatter/shm");
  if (block == 0) return;  // every rank agrees
  if (schedules::peer::words_fit(pm, total)) return small_words(t, pm, a);
  // Only send matters: recv is private. In place (recv = send + r*count) peers never read
  // block r, the only one this rank writes, so the registered path is safe in place too.
  if (!schedules::peer::registered(pm, a, total, 0)) return staged(t, pm, a);
  const std::uint64_t base = pm.begin_call();
  const void* in = a.send;
  pm.raise(base + kInputsReady);
  // Own input first: in place, recv is the own block r and is read before it is written.
  schedules::peer::RankPointers inputs(n);
  schedules::peer::peer_inputs(pm, in, a.send, base + kInputsReady, r, inputs);
  for (auto& p : inputs) p = elem_ptr(p, static_cast<std::size_t>(r) * a.count, a.dtype);
  schedules::peer::reduce_inputs(pm, m, a, a.recv, inputs, a.count);
  // Peers read this rank's send, which the caller owns once this returns.
  pm.end_call(base, true);
}

// Bytes one rank loads + stores (M = one block): its block from n inputs (nM read, M written);
// staged adds the copy-in of the n-1 blocks peers read (2(n-1)M).
double traffic(int n, const CollArgs& a, bool reg) {
  const double m = static_cast<double>(a.bytes(a.count)), k = n;
  return (k + 1) * m + (reg ? 0 : 2 * (k - 1) * m);
}

COLLBENCH_REGISTER({Op::reduce_scatter, "shm", "any",
                    "zero-copy in node peer memory: each rank reduces its block straight from all inputs, one flag "
                    "round",
                    "ranks on one node; host, or device memory over CUDA IPC (--backend mpi); registered buffers "
                    "(--buffers registered) skip the staging copy",
                    &run, nullptr, &traffic}, {.peer_memory = true, .simplicity_rank = 90, .claims = &claiming});

}  // namespace
}  // namespace collbench::reduce_scatter_shm
