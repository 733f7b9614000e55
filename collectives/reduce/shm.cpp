// Zero-copy reduce in one node's peer memory: no messages. Every rank's input is readable by
// its peers — the user's send when buffers are registered (allocated in peer memory), else a
// staging copy in a scratch block. All ranks cooperate: rank r reduces slice r of the message
// straight from every input, registered into the root's recv itself, staged into a result
// area of its scratch that the root then copies from, or, where the run measured the kernel's
// single copy faster, nothing staged: the slices read and the results written by the kernel
// (schedules::peer::kernel_sliced_round). Below schedules::peer::kSmallBytes the root alone
// reduces everything: one flag round, and the others only publish their input.
// Flags: transport/peer_memory.hpp.

#include "collectives/patterns/chunks.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/peer.hpp"

namespace collbench::reduce_shm {
namespace {

constexpr std::uint64_t kInputsReady = 1, kSliceReduced = 2;

double traffic(int n, const CollArgs& a, bool reg);

// Staged, every stage part a rank reads it alone reads: claimed, by one round's traffic
// (schedules/peer.hpp). Registered, the inputs are the users' sends: never claimed. Staged
// slices the kernel copies (schedules::peer::kernel_reduces): nothing staged, nothing claimed;
// the reductions go by segments.
ClaimChoice claiming(const PeerMemory& pm, int n, const CollArgs& a, bool reg) {
  if (!reg && schedules::peer::kernel_reduces(pm, n, a))
    return {.kernel_copy = true, .segment_bytes = schedules::peer::segment_bytes(pm, a)};
  const double traffic_bytes = traffic(n, schedules::peer::first_round(a, schedules::peer::stage_step(pm, a)), reg);
  return {!reg && schedules::peer::claims(pm, traffic_bytes), traffic_bytes, false,
          schedules::peer::segment_bytes(pm, a)};
}

// One call over the whole message (registered) or one round of at most stage_bytes() (staged).
// claim (staged only): every stage part this rank reads, it alone reads (schedules/peer.hpp).
void round(Transport& t, PeerMemory& pm, const CollArgs& a, bool reg, bool claim) {
  const int n = t.size(), r = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  MemorySpace& m = t.memory();
  const bool small = bytes < schedules::peer::kSmallBytes;
  // Staged: the input copy; for the sliced path a non-root's reduced slice goes in its own
  // slice's place there, which it never stages (nobody else reads it while it reduces).
  std::byte* stage = reg ? nullptr : static_cast<std::byte*>(pm.scratch("reduce/shm", bytes));
  const std::uint64_t base = pm.begin_call();
  const patterns::Range mine = patterns::chunk(a.count, n, r);
  const void* in = a.send;
  if (!reg) {
    // Small: the root reads every other input whole, and its own from its send. Sliced: peers
    // read every slice but this rank's own.
    if (small && r != a.root)
      m.copy(stage, a.send, bytes);
    else if (!small)
      schedules::peer::stage_except(m, stage, a.send, bytes, a.bytes(mine.offset), a.bytes(mine.end()));
    in = stage;
  }
  pm.raise(base + kInputsReady);
  schedules::peer::RankPointers inputs(n);
  if (small) {
    if (r == a.root) {
      // Own input first: in place, recv is send and must be read before it is written.
      schedules::peer::peer_inputs(pm, in, a.send, base + kInputsReady, r, inputs);
      const schedules::peer::ClaimPeers peers{r, n, r};  // the root alone reads them
      schedules::peer::reduce_inputs(pm, m, a, a.recv, inputs, a.count, claim ? &peers : nullptr);
    }
    // Registered: the root reads the others' sends, which their callers own once they return.
    pm.end_call(base, reg);
    return;
  }
  // The root's input first: in place (registered), the root's recv slice is its send slice and
  // must be read before it is written. Nobody else reads or writes slice r of any buffer.
  schedules::peer::peer_inputs(pm, in, a.send, base + kInputsReady, a.root, inputs);
  for (auto& p : inputs) p = elem_ptr(p, mine.offset, a.dtype);
  // The root's own slice goes straight into its recv (staged, peers read its stage, not its
  // send, so in place is safe); the others' into the root's recv (registered) or their stage.
  void* out = r == a.root ? a.recv : reg ? pm.peer(a.recv, a.root) : stage;
  const schedules::peer::ClaimPeers peers{r, n, a.root};  // only this rank reads slice r
  schedules::peer::reduce_inputs(pm, m, a, elem_ptr(out, mine.offset, a.dtype), inputs, mine.count,
                                 claim ? &peers : nullptr);
  if (reg) {
    // The root's settling end_call waits for every rank's kDone, raised after its slice is
    // written: no separate step. Every rank's send is read by its peers: all settle.
    pm.end_call(base, true);
    return;
  }
  pm.raise(base + kSliceReduced);
  if (r == a.root) {
    for (int i = 1; i < n; ++i) {
      const int q = (r + i) % n;
      const patterns::Range s = patterns::chunk(a.count, n, q);
      pm.wait(q, base + kSliceReduced);
      schedules::peer::copy_claiming(pm, m, a, claim, elem_ptr(a.recv, s.offset, a.dtype),
                                     pm.peer(stage + a.bytes(s.offset), q), a.bytes(s.count));
    }
  }
  // Only peer memory was read (and the root's copies from it finish before its next call).
  pm.end_call(base, false);
}

// Up to PeerMemory::kMaxWordBytes (schedules::peer::words_fit): every rank's input travels in
// words that carry its flag value, and the root reduces the words. Their lines move together,
// where a flag and a stage were two trips in a row (2 ranks, Xeon VM: 8 B 0.80-0.83x the library
// before, 1.40-1.55x in one word; 16-128 B 0.92-0.96x before, 1.35-1.75x in 128-byte words;
// bench/README.md).
void small_words(Transport& t, PeerMemory& pm, const CollArgs& a) {
  const int n = t.size();
  schedules::peer::PerRank<schedules::peer::Words> words(n);
  const std::uint64_t base = schedules::peer::exchange_words(pm, a.send, a.bytes(a.count), words);
  if (t.rank() == a.root) {
    schedules::peer::RankPointers inputs(n);
    for (int k = 0; k < n; ++k) inputs[k] = words[k].data();
    schedules::peer::reduce_inputs(pm, t.memory(), a, a.recv, inputs, a.count);
  }
  pm.end_alternating_call(base);
}

void run(Transport& t, const CollArgs& a) {
  const std::size_t bytes = a.bytes(a.count);
  if (t.size() == 1) {
    t.memory().copy(a.recv, a.send, bytes);  // a no-op in place
    return;
  }
  PeerMemory& pm = schedules::peer::memory_for(t, "reduce/shm");
  if (bytes == 0) return;  // every rank agrees
  if (schedules::peer::words_fit(pm, bytes)) return small_words(t, pm, a);
  // Registered needs the root's recv in peer memory too (ranks write their slices into it);
  // the heap is symmetric, so each rank translates its own recv's address to the root's.
  // A non-root's recv is unused: it is never written (in place it is that rank's input).
  // Up to PeerMemory::kInlineBytes registered buffers are staged as well, as allreduce's are:
  // copying a few bytes costs less than the settling round reading peers' sends needs (8 B,
  // 2 ranks: registered 0.91x the library, staged 1.19x; bench/README.md).
  if (bytes > PeerMemory::kInlineBytes && schedules::peer::registered(pm, a, bytes, bytes))
    return round(t, pm, a, true, false);
  const ClaimChoice c = claiming(pm, t.size(), a, false);
  if (c.kernel_copy)
    return schedules::peer::in_rounds(pm, a, [&](const CollArgs& part) {
      schedules::peer::kernel_sliced_round(t, pm, part, "reduce/shm", "reduce/shm/kernel", part.root);
    });
  schedules::peer::in_rounds(pm, a, [&](const CollArgs& part) { round(t, pm, part, false, c.claims); });
}

// Bytes the root loads + stores. Sliced: its slice from n inputs (M read, M/n written); staged
// adds the copy-in of the slices peers read (2(n-1)M/n) and the collection of the others'
// slices (2(n-1)M/n). Small path (and words): n inputs read, M written.
double traffic(int n, const CollArgs& a, bool reg) {
  const double m = static_cast<double>(a.bytes(a.count)), k = n;
  if (a.bytes(a.count) < schedules::peer::kSmallBytes) return (k + 1) * m;
  return m + m / k + (reg ? 0 : 4 * (k - 1) * m / k);
}

COLLBENCH_REGISTER({Op::reduce, "shm", "any",
                    "zero-copy in node peer memory: each rank reduces its slice straight from all inputs, the root "
                    "collects the slices (small messages: the root reduces all)",
                    "ranks on one node, any root; host, or device memory over CUDA IPC (--backend mpi); registered "
                    "buffers (--buffers registered) skip the staging copy and write slices straight into the root's "
                    "recv, as unregistered ones do by the kernel's single copy (CMA) at the sizes the run measured it "
                    "faster",
                    &run, nullptr, &traffic}, {.peer_memory = true, .simplicity_rank = 90, .claims = &claiming});

}  // namespace
}  // namespace collbench::reduce_shm
