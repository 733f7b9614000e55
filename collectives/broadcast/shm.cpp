// Zero-copy broadcast in one node's peer memory: no messages. The root's buffer is readable by
// every rank — the user's send when buffers are registered (allocated in peer memory), else a
// staging copy in a scratch block — and every other rank copies it straight into its recv
// once the root's flag says it is there. Staged, a large message is staged in up to
// kMaxSegments segments, one flag step each, so the readers' copies overlap the root's
// copy-in. Memory traffic: registered, each non-root reads and writes M; staged, the root
// also copies M in. Flags: transport/peer_memory.hpp.
#include <algorithm>
#include <cstring>

#include "collectives/patterns/chunks.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/defaults.hpp"
#include "collectives/schedules/peer.hpp"

namespace collbench::broadcast_shm {
namespace {

// Segment s is ready at step kFirstSegment + s; steps stop short of PeerMemory::kDone.
constexpr std::uint64_t kFirstSegment = 1;
constexpr int kMaxSegments = 8;
static_assert(kFirstSegment + kMaxSegments <= PeerMemory::kDone, "a segment step would reach kDone");

double traffic(int n, const CollArgs& a, bool reg);

// The staged pipeline's segment: schedules::peer::segment_bytes (the L1's), at most kMaxSegments
// of them a round. On the Xeon VM the 32 KiB segments read 1.67-1.86x the library from 64 KiB to
// 1 MiB where the earlier 256 KiB ones read 1.28-1.56x (bench/README.md). Device memory keeps the
// 256 KiB segment: each is a device copy, and none was measured there.
std::size_t pipeline_segment_bytes(const PeerMemory& pm, const CollArgs& a) {
  return pm.kind() == MemoryKind::host || a.segment_bytes ? schedules::peer::segment_bytes(pm, a)
                                                          : schedules::kPipelineSegmentBytes;
}

// Staged on 2 ranks, the non-root is the stage's one reader: it claims it, by one round's
// traffic (schedules/peer.hpp). Registered, the root's send is the user's: never claimed; the
// copies into recv stream where the run measured that faster for the message
// (schedules::peer::streams). Staged they do not: each reader copies a segment just after the
// root wrote it, and streaming those copies took 1.04-1.10x the time at 2-16 MiB (2 ranks, Xeon
// VM, against 0.99 at 1 MiB where neither streams; bench/README.md).
ClaimChoice claiming(const PeerMemory& pm, int n, const CollArgs& a, bool reg) {
  const double traffic_bytes = traffic(n, schedules::peer::first_round(a, schedules::peer::stage_step(pm, a)), reg);
  return {!reg && n == 2 && schedules::peer::claims(pm, traffic_bytes), traffic_bytes, false,
          reg ? 0 : pipeline_segment_bytes(pm, a), reg && schedules::peer::streams(pm, a.bytes(a.count))};
}

// One call over the whole message (registered) or one round of at most stage_bytes() (staged).
// claim: the one reader of a 2-rank stage claims it (schedules/peer.hpp); stream (registered):
// the copies into recv go by streaming stores.
void round(Transport& t, PeerMemory& pm, const CollArgs& a, bool reg, bool claim, bool stream) {
  const int r = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  MemorySpace& m = t.memory();
  void* stage = reg ? nullptr : pm.scratch("broadcast/shm", bytes);  // collective: on every rank
  const std::size_t seg_elems = std::max<std::size_t>(1, pipeline_segment_bytes(pm, a) / a.elem_size());
  const int segments =
      reg ? 1 : static_cast<int>(std::clamp<std::size_t>((a.count + seg_elems - 1) / seg_elems, 1, kMaxSegments));
  const std::uint64_t base = pm.begin_call();
  if (r == a.root) {
    if (reg) {
      pm.raise(base + kFirstSegment);
    } else {
      for (int s = 0; s < segments; ++s) {
        const patterns::Range seg = patterns::chunk(a.count, segments, s);
        m.copy(elem_ptr(stage, seg.offset, a.dtype), elem_ptr(a.send, seg.offset, a.dtype), a.bytes(seg.count));
        pm.raise(base + kFirstSegment + static_cast<std::uint64_t>(s));
      }
    }
    schedules::peer::copy_out(m, stream, a.recv, a.send, bytes);  // a no-op in place
    // Registered: the peers read the root's send, which the caller owns once this returns.
    pm.end_call(base, reg);
    return;
  }
  const void* src = reg ? pm.peer(a.send, a.root) : pm.peer(stage, a.root);
  for (int s = 0; s < segments; ++s) {
    const patterns::Range seg = patterns::chunk(a.count, segments, s);
    pm.wait(a.root, base + kFirstSegment + static_cast<std::uint64_t>(s));
    schedules::peer::copy_claiming(pm, m, a, claim, elem_ptr(a.recv, seg.offset, a.dtype),
                                   elem_ptr(src, seg.offset, a.dtype), a.bytes(seg.count), stream);
  }
  // Nobody reads a non-root's buffers: it need not wait for the others; its next call does.
  pm.end_call(base, false);
}

// Up to PeerMemory::kMaxWordBytes (schedules::peer::words_fit): the root's bytes travel in words
// that carry its flag value; every other rank posts an empty word, as the words' contract asks.
// The root's lines move to each reader together, where a flag and a stage were two trips in a
// row (2 ranks, Xeon VM: 8 B 0.80-0.92x the library before, 1.38-1.59x in one word; 16-128 B
// 0.91-1.07x before, 1.35-1.79x in 128-byte words; bench/README.md).
void small_words(Transport& t, PeerMemory& pm, const CollArgs& a) {
  const bool root = t.rank() == a.root;
  const std::size_t bytes = a.bytes(a.count);
  schedules::peer::PerRank<schedules::peer::Words> words(t.size());
  const std::uint64_t base = schedules::peer::exchange_words(pm, root ? a.send : nullptr, bytes, words, a.root);
  if (root)
    t.memory().copy(a.recv, a.send, bytes);  // a no-op in place
  else
    std::memcpy(a.recv, words[static_cast<std::size_t>(a.root)].data(), bytes);
  pm.end_alternating_call(base);
}

void run(Transport& t, const CollArgs& a) {
  const std::size_t bytes = a.bytes(a.count);
  if (t.size() == 1) {
    t.memory().copy(a.recv, a.send, bytes);  // a no-op in place
    return;
  }
  PeerMemory& pm = schedules::peer::memory_for(t, "broadcast/shm");
  if (bytes == 0) return;  // every rank agrees
  if (schedules::peer::words_fit(pm, bytes)) return small_words(t, pm, a);
  // Registered: the root's send is read in place, translated from this rank's own send (the
  // heap is symmetric: every rank allocates its buffers in the same order).
  const bool reg = schedules::peer::registered(pm, a, bytes, bytes);
  const ClaimChoice c = claiming(pm, t.size(), a, reg);
  if (reg) return round(t, pm, a, true, false, c.streams);
  schedules::peer::in_rounds(pm, a, [&](const CollArgs& part) { round(t, pm, part, false, c.claims, false); });
}

// Bytes the busiest rank (the root) loads + stores: its copy send -> recv (2M), and staged the
// copy into the stage (2M); every other rank copies M once (2M).
double traffic(int, const CollArgs& a, bool reg) {
  const double m = static_cast<double>(a.bytes(a.count));
  return reg ? 2 * m : 4 * m;
}

COLLBENCH_REGISTER({Op::broadcast, "shm", "any",
                    "zero-copy in node peer memory: every rank copies the root's buffer straight into its recv "
                    "(staged: segment by segment as the root stages them)",
                    "ranks on one node, any root; host, or device memory over CUDA IPC (--backend mpi); registered "
                    "buffers (--buffers registered) skip the staging copy",
                    &run, nullptr, &traffic}, {.peer_memory = true, .simplicity_rank = 90, .claims = &claiming});

}  // namespace
}  // namespace collbench::broadcast_shm
