// Zero-copy allreduce in one node's peer memory (Li, Hoefler, Hu, Snir 2014; NCCL's
// intra-node kernels): no messages. Each rank r reduces slice r of the message straight from
// every rank's input into a result every peer can read, raises its flag, and copies the other
// slices from their owners' results. Inputs are the user's buffers when they are registered
// (allocated in peer memory, --buffers registered), else a staging copy in peer memory.
// Memory traffic per rank for M bytes on n ranks (bench/README.md has the bound):
//   registered: reduce reads M, writes M/n; copy reads and writes (n-1)M/n  ->  (3n-1)M/n + ...
//   staged: + copy-in of (n-1)M/n, and the own slice copied out of peer memory.
// Staged, where the run measured the kernel's single copy faster, nothing is staged: the slices
// are read and the reduced ones written by the kernel (schedules::peer::kernel_sliced_round).
// Below schedules::peer::kSmallBytes every rank reduces the whole message itself: one flag
// round, double-buffered. Flags: transport/peer_memory.hpp.
#include <cstring>

#include "collectives/patterns/chunks.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/peer.hpp"

namespace collbench::allreduce_shm {
namespace {

constexpr std::uint64_t kInputsReady = 1, kSliceReduced = 2;

// Up to PeerMemory::kMaxWordBytes, where the CPU has 16-byte atomics, each input travels in words
// that carry its flag value (PeerMemory::post_word; 2 ranks, Xeon VM, 16-128 B: 1.22-1.52x the
// library through the inline slot and a stage, 1.24-1.68x in words).
void small_words(Transport& t, PeerMemory& pm, const CollArgs& a) {
  const int n = t.size();
  schedules::peer::PerRank<schedules::peer::Words> words(n);
  const std::uint64_t base = schedules::peer::exchange_words(pm, a.send, a.bytes(a.count), words);
  schedules::peer::RankPointers inputs(n);
  for (int k = 0; k < n; ++k) inputs[k] = words[k].data();  // rank order: every rank's sum in the same order
  schedules::peer::reduce_inputs(pm, t.memory(), a, a.recv, inputs, a.count);
  pm.end_alternating_call(base);
}

// Below kSmallBytes every rank reduces the whole message itself, from every rank's input.
// Staged: each rank copies its input into the alternate half of a double-buffered block, so
// one flag round per call. Up to PeerMemory::kMaxWordBytes, in words (small_words); without
// 16-byte atomics, up to PeerMemory::kInlineBytes of host memory (registered too: copying a few
// bytes costs less than settling) the stage is the rank's inline slot in its flag line instead:
// a peer's flag and input arrive in one cache line.
void small_staged(Transport& t, PeerMemory& pm, const CollArgs& a) {
  constexpr std::size_t half = schedules::peer::kSmallBytes;
  const std::size_t bytes = a.bytes(a.count);
  const bool host = pm.kind() == MemoryKind::host;
  if (schedules::peer::words_fit(pm, bytes)) return small_words(t, pm, a);
  const bool inline_data = host && bytes <= PeerMemory::kInlineBytes;
  auto* halves = inline_data ? nullptr : static_cast<std::byte*>(pm.scratch("allreduce/shm/small", 2 * half));
  const std::uint64_t base = pm.begin_call();
  std::byte* stage = inline_data ? pm.inline_slot(t.rank(), base) : halves + PeerMemory::alternate(base) * half;
  MemorySpace& m = t.memory();
  m.copy(stage, a.send, bytes);
  pm.raise(base + kInputsReady);
  // Every input from the stages in rank order: every rank's sum in the same order, so the
  // same bits, and in place recv (= send) is not read.
  schedules::peer::RankPointers inputs(t.size());
  if (inline_data) {
    for (int k = 0; k < t.size(); ++k) {
      if (k != t.rank()) pm.wait(k, base + kInputsReady);
      inputs[static_cast<std::size_t>(k)] = pm.inline_slot(k, base);
    }
  } else {
    schedules::peer::peer_inputs(pm, stage, stage, base + kInputsReady, 0, inputs);
  }
  schedules::peer::reduce_inputs(pm, m, a, a.recv, inputs, a.count);
  pm.end_alternating_call(base);
}

// Registered, out of place: straight from every rank's send; the peers read this rank's send,
// which the caller owns once this returns, so the call settles (a second flag round).
void small_registered(Transport& t, PeerMemory& pm, const CollArgs& a) {
  const std::uint64_t base = pm.begin_call();
  pm.raise(base + kInputsReady);
  schedules::peer::RankPointers inputs(t.size());
  schedules::peer::peer_inputs(pm, a.send, a.send, base + kInputsReady, 0, inputs);  // rank order: the same bits
  schedules::peer::reduce_inputs(pm, t.memory(), a, a.recv, inputs, a.count);
  pm.end_call(base, true);
}

double traffic(int n, const CollArgs& a, bool reg);

// The sliced path claims (schedules/peer.hpp): staged, slice r of every peer's stage, which only
// this rank reads; on 2 ranks also the peer's reduced slice, which only this rank copies
// (registered: the peer's recv, the call's output, claimed with its own bytes). Registered on
// more ranks it reads only users' sends and slices others read too: nothing. By the traffic
// between two flags: the whole call registered, one round staged. The copies of the reduced
// slices into recv stream where the run measured that faster for the whole recv
// (schedules::peer::streams). Staged slices the kernel copies (schedules::peer::kernel_reduces):
// nothing staged, claimed or streamed; the reductions go by segments.
ClaimChoice claiming(const PeerMemory& pm, int n, const CollArgs& a, bool reg) {
  if (!reg && schedules::peer::kernel_reduces(pm, n, a))
    return {.kernel_copy = true, .segment_bytes = schedules::peer::segment_bytes(pm, a)};
  const double traffic_bytes = traffic(n, reg ? a : schedules::peer::first_round(a, schedules::peer::stage_step(pm, a)), reg);
  const bool sliced = a.bytes(a.count) >= schedules::peer::kSmallBytes;
  return {sliced && (!reg || n == 2) && schedules::peer::claims(pm, traffic_bytes), traffic_bytes, false,
          schedules::peer::segment_bytes(pm, a), sliced && schedules::peer::streams(pm, a.bytes(a.count))};
}

// One call over the whole message (registered) or one round of at most stage_bytes() (staged);
// claim and stream as claiming() chose them for the whole call.
void round(Transport& t, PeerMemory& pm, const CollArgs& a, bool reg, bool claim, bool stream) {
  const int n = t.size(), r = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  MemorySpace& m = t.memory();
  const patterns::Range mine = patterns::chunk(a.count, n, r);
  // Staged: the input copy; peers read every slice but this rank's own, whose place in the
  // stage holds the reduced slice instead (nobody else reads or writes it while reducing).
  std::byte* stage = reg ? nullptr : static_cast<std::byte*>(pm.scratch("allreduce/shm", bytes));
  const std::uint64_t base = pm.begin_call();
  const void* in = a.send;
  if (!reg) {
    schedules::peer::stage_except(m, stage, a.send, bytes, a.bytes(mine.offset), a.bytes(mine.end()));
    in = stage;
  }
  pm.raise(base + kInputsReady);
  // Slice r, reduced where peers can read it: the registered recv, else its place in the
  // stage. The own slice is read from the user's buffer, first (reduce_inputs' aliasing rule).
  schedules::peer::RankPointers inputs(n);
  schedules::peer::peer_inputs(pm, in, a.send, base + kInputsReady, r, inputs);
  for (auto& p : inputs) p = elem_ptr(p, mine.offset, a.dtype);
  std::byte* result = reg ? static_cast<std::byte*>(a.recv) : stage;
  const schedules::peer::ClaimPeers peers{r, n, r};
  schedules::peer::reduce_inputs(pm, m, a, result + a.bytes(mine.offset), inputs, mine.count,
                                 claim && !reg ? &peers : nullptr);
  // Staged, the own slice's copy out of the stage overlaps the peers' copies of it, unless a
  // peer claims it (2 ranks): then it comes first, as a claim writes the lines it reads.
  const bool claimed = claim && n == 2;
  auto own_slice_out = [&] {
    if (!reg)
      schedules::peer::copy_out(m, stream, elem_ptr(a.recv, mine.offset, a.dtype), result + a.bytes(mine.offset),
                                a.bytes(mine.count));
  };
  if (claimed) own_slice_out();
  pm.raise(base + kSliceReduced);
  if (!claimed) own_slice_out();
  for (int k = 1; k < n; ++k) {  // staggered: rank r starts with r + 1, so owners are read evenly
    const int q = (r + k) % n;
    const patterns::Range s = patterns::chunk(a.count, n, q);
    pm.wait(q, base + kSliceReduced);
    schedules::peer::copy_claiming(pm, m, a, claimed, elem_ptr(a.recv, s.offset, a.dtype),
                                   pm.peer(result + a.bytes(s.offset), q), a.bytes(s.count), stream);
  }
  // Registered: peers read this rank's send and recv, which the caller owns once this returns.
  pm.end_call(base, reg);
}

void run(Transport& t, const CollArgs& a) {
  const std::size_t bytes = a.bytes(a.count);
  if (t.size() == 1) {
    t.memory().copy(a.recv, a.send, bytes);
    return;
  }
  PeerMemory& pm = schedules::peer::memory_for(t, "allreduce/shm");
  const bool reg = schedules::peer::registered(pm, a, bytes, bytes);
  if (bytes < schedules::peer::kSmallBytes) {
    // In place, recv (= send) is written while peers still read it: staged.
    if (reg && a.send != a.recv && bytes > PeerMemory::kInlineBytes) return small_registered(t, pm, a);
    return small_staged(t, pm, a);
  }
  const ClaimChoice c = claiming(pm, t.size(), a, reg);
  if (reg) return round(t, pm, a, true, c.claims, c.streams);
  if (c.kernel_copy)
    return schedules::peer::in_rounds(pm, a, [&](const CollArgs& part) {
      schedules::peer::kernel_sliced_round(t, pm, part, "allreduce/shm", "allreduce/shm/kernel", -1);
    });
  schedules::peer::in_rounds(pm, a, [&](const CollArgs& part) { round(t, pm, part, false, c.claims, c.streams); });
}

// Bytes one rank loads + stores. Sliced: reduce its slice from n inputs (M read, M/n written),
// copy the n-1 other slices (2(n-1)M/n); staged adds the copy-in of the n-1 slices peers read
// and the own slice's copy out (2M). Small path: n inputs read, M written; staged (and
// inline) adds the copy-in (2M).
double traffic(int n, const CollArgs& a, bool reg) {
  const double m = static_cast<double>(a.bytes(a.count)), k = n;
  if (a.bytes(a.count) < schedules::peer::kSmallBytes)
    return reg && a.bytes(a.count) > PeerMemory::kInlineBytes ? (k + 1) * m : (k + 3) * m;
  const double sliced = m * (3 * k - 1) / k;
  return reg ? sliced : sliced + 2 * m;
}

COLLBENCH_REGISTER({Op::allreduce, "shm", "any",
                    "zero-copy in node peer memory: each rank reduces its slice straight from all inputs, flags not "
                    "messages",
                    "ranks on one node; host, or device memory over CUDA IPC (--backend mpi); registered buffers "
                    "(--buffers registered) skip the staging copy, as unregistered ones do by the kernel's single "
                    "copy (CMA) at the sizes the run measured it faster",
                    &run, nullptr, &traffic}, {.peer_memory = true, .simplicity_rank = 90, .claims = &claiming});

}  // namespace
}  // namespace collbench::allreduce_shm
