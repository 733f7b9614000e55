#pragma once
// What the zero-copy (peer memory) algorithms share: finding the transport's peer memory or
// refusing with the reason, where each rank's input lives for peers to read (the user's
// buffer when it is registered — allocated in peer memory, as nccl-tests -R does — else a
// staging copy in a scratch block), and the segmented n-way reduction straight from peers'
// memory. Not an algorithm itself: it registers nothing. Flags: transport/peer_memory.hpp; the
// run-time probes the rules here read (claims, kernel_copies, streams): peer_probes.hpp.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "collectives/collective.hpp"
#include "collectives/schedules/peer_probes.hpp"
#include "collectives/transport/kernel_copy.hpp"
#include "collectives/transport/transport.hpp"

namespace collbench::schedules::peer {

// Below this many bytes, every rank reduces (or gathers) the whole message from all peers
// itself: one flag round instead of two; the n-fold reads are cheaper than a second round.
inline constexpr std::size_t kSmallBytes = 16 << 10;

// The segment zero-copy calls work in: an n-way reduction's (reduce_inputs), a claimed copy's
// (copy_claiming) and the staged broadcast's pipeline step. The largest power of two within the
// machine's smallest L1d (PeerMemory::l1_bytes), between kMinSegmentBytes and kMaxSegmentBytes;
// kSegmentBytes when hwloc knows no L1. Within the L1 a segment's output stays there across the
// n-1 passes over the peers' inputs, a copied segment's lines are still in this core's caches
// when it claims them, and a broadcast's readers start after one L1's worth. 32 KiB on both
// families these machines come in (48 KiB L1d on the Xeon VM, 32 KiB on the EPYC). On the Xeon VM
// (2 ranks) the reductions read the same from 16 to 128 KiB within the spread between runs, and
// the staged broadcast gained from 256 KiB to 8-32 KiB (bench/README.md). CollArgs::segment_bytes
// (--segment) overrides it.
inline constexpr std::size_t kSegmentBytes = 32 << 10;
inline constexpr std::size_t kMinSegmentBytes = 8 << 10, kMaxSegmentBytes = 64 << 10;
constexpr std::size_t segment_bytes_for(std::size_t l1_bytes) {
  return l1_bytes ? std::clamp(std::bit_floor(l1_bytes), kMinSegmentBytes, kMaxSegmentBytes) : kSegmentBytes;
}
// The segment of this call: --segment when given, else segment_bytes_for(pm.l1_bytes()); on
// device memory, which no CPU cache holds, kSegmentBytes.
std::size_t segment_bytes(const PeerMemory& pm, const CollArgs& a);

// Staged paths move a message in rounds, each a call of its own (begin_call .. end_call), of at
// most stage_bytes() of each block: the machine's smallest L2 (PeerMemory::l2_bytes), at most
// kStageBytes and at least kMinStageBytes; kStageBytes when no L2 is known. Within the L2 a
// round's stage is still in its owner's cache when the peers read it; the cap keeps the stage in
// peer memory bounded whatever the message (peers map it too: harness.memory holds peak memory to
// 3x the largest buffer). Measured, 2 ranks, 1 MiB L2 (bench/README.md): a 4 MiB stage took
// 1.04-1.81x the time of a 1 MiB one at 4-16 MiB in every op; 256 KiB to 1 MiB were within the
// spread between runs.
inline constexpr std::size_t kStageBytes = 1 << 20, kMinStageBytes = 64 << 10;
constexpr std::size_t stage_bytes_for(std::size_t l2_bytes) {
  return l2_bytes ? std::clamp(l2_bytes, kMinStageBytes, kStageBytes) : kStageBytes;
}
std::size_t stage_bytes(const PeerMemory& pm);  // stage_bytes_for(pm.l2_bytes())
// Elements of one block a staged round moves: stage_bytes() of them, at least one.
inline std::size_t stage_step(const PeerMemory& pm, const CollArgs& a) {
  return std::max<std::size_t>(1, stage_bytes(pm) / a.elem_size());
}

// Calls round(part) for consecutive element ranges of at most stage_bytes() (at least one, for
// count 0): `part` is `a` with send and recv advanced to the range and count its length. For
// ops whose elements are independent (allreduce, reduce, broadcast).
template <class Round>
void in_rounds(const PeerMemory& pm, const CollArgs& a, Round&& round) {
  const std::size_t step = stage_step(pm, a);
  std::size_t off = 0;
  do {
    CollArgs part = a;
    part.count = std::min(step, a.count - off);
    part.send = elem_ptr(a.send, off, a.dtype);
    part.recv = elem_ptr(a.recv, off, a.dtype);
    round(part);
    off += part.count;
  } while (off < a.count);
}

// One value per rank (the inputs of an n-way reduction, or their words), held inline up to
// kInlineRanks ranks so a small-message call allocates nothing.
template <class T>
class PerRank {
 public:
  static constexpr int kInlineRanks = 16;
  explicit PerRank(int n) : n_(static_cast<std::size_t>(n)) {
    if (n > kInlineRanks) heap_.resize(n_);
  }
  T* begin() { return heap_.empty() ? inline_.data() : heap_.data(); }
  T* end() { return begin() + n_; }
  operator std::span<T>() { return {begin(), n_}; }
  operator std::span<const T>() { return {begin(), n_}; }
  T& operator[](std::size_t i) { return begin()[i]; }

 private:
  std::size_t n_;
  std::array<T, kInlineRanks> inline_;  // not zeroed: the users write each rank's before reading it
  std::vector<T> heap_;
};
using RankPointers = PerRank<const void*>;

// Small messages in 16-byte words (NCCL's LL protocol): up to PeerMemory::kMaxWordBytes of host
// memory, where the CPU has 16-byte atomics (words_fit), every
// rank posts its `bytes` of `in` with its flag value in every word and waits for every peer's
// message, as PeerMemory::post_word's contract asks; words[k] then holds rank k's bytes (this
// rank's own copied). With `from` (a rank), only it posts `bytes` and the others an empty word
// (in: nullptr), as a broadcast's root. Returns the call's base: end the call with
// end_alternating_call. The lines of a message move together, where a flag and a stage are two
// trips in a row.
using Words = std::array<std::uint64_t, PeerMemory::kMaxWords>;  // one rank's message, whole words
bool words_fit(const PeerMemory& pm, std::size_t bytes);
std::uint64_t exchange_words(PeerMemory& pm, const void* in, std::size_t bytes, std::span<Words> words, int from = -1);

// The transport's peer memory for `algo` (op/algo, for the reason), or NotSupported when its
// ranks do not share a node, it has none, or it is not the buffers' kind (host or device).
// The same on every rank; collective on the first call.
PeerMemory& memory_for(Transport& t, std::string_view algo);

// Whether a.send (send_bytes) and, unless recv_bytes is 0, a.recv (recv_bytes) lie in peer
// memory: the registered path. Every rank must agree (the harness registers all ranks'
// buffers or none).
bool registered(const PeerMemory& pm, const CollArgs& a, std::size_t send_bytes, std::size_t recv_bytes);

// Stages this rank's input for peers: copies src[0, bytes) into `stage` (a scratch block of
// peer memory) at the same offsets, except the bytes [skip_begin, skip_end) only this rank
// reads, which it reads from its own buffer instead (its own slice or block).
void stage_except(MemorySpace& m, void* stage, const void* src, std::size_t bytes, std::size_t skip_begin,
                  std::size_t skip_end);

// Claiming: a reader takes the whole cache lines inside [p, p + bytes) of a peer's block into
// its own cache in the modified state, by storing back each line's first word unchanged. For
// memory this rank has just read and that nobody else reads, nor its owner writes, before this
// rank's next flag. Why: the owner writes it again next call, and a line still shared with the
// reader then costs the owner an invalidation, several times the line's copy; taking a line the
// reader holds modified costs it little (a 64 KiB stage rewritten after a peer's read: 6.9-9.7
// us, after the peer's claim 1.1 us, on the 2-vCPU EPYC VM; bench/cross_core_copy, bench/README.md).
void claim(const void* p, std::size_t bytes);

// Whether a call claims what it reads: host peer memory (device memory has no such lines) where
// claims pay (measure_claims), and the traffic between two of its flags — one round of a staged
// call, which the next round rewrites at once — at most kClaimLlcMultiple x the machine's
// last-level cache (PeerMemory::llc_bytes), so the owner rewrites the lines while the reader
// still holds them. Measured whole rounds (the owner's rewrite, then the reader's copy and claim;
// bench/cross_core_copy, 2-vCPU EPYC VM, L2 1 MiB, L3 32 MiB): claimed rounds took 0.50x the
// shared ones at 1 MiB, 0.91x at 4 MiB and 1.11x at 16 MiB with the two vCPUs near (a 60 ns
// flag), and 0.19-0.21x, 0.20-0.21x and 0.58-0.72x far apart (250 ns), where every invalidation
// crosses the chip. The same on every rank of a node.
inline constexpr double kClaimLlcMultiple = 1;
double claim_max_traffic(const PeerMemory& pm);  // 0: never (device memory, claims do not pay, no cache known)
bool claims(const PeerMemory& pm, double traffic_bytes);

// The kernel's single copy (transport/kernel_copy.hpp) instead of staging, where it measures
// faster: a staged call copies its input into peer memory and the reader then loads lines the
// other core has just written (at 0.30-0.61x the local copy rate from 64 KiB to 1 MiB on the
// 2-vCPU Xeon VM), where the kernel copies the peer's user buffer once (it pins the pages: 0.6 us
// a call, then 0.44-0.79x memcpy's rate there). Which wins depends on the machine and the size
// (docs/zero-copy.md): measure_kernel_copy (peer_probes.hpp) times both.
// Whether a staged call of `bytes` per peer read reads the peers' user buffers by the kernel.
// `within_probe`: only up to the largest size the probe measured (its rounds read one unchanged
// buffer again and again, as a call repeated on the same buffers does; beyond it nothing says the
// kernel's copy still wins).
bool kernel_copies(const PeerMemory& pm, std::size_t bytes, bool within_probe = false);
// A call's user buffers for the kernel's copy: `p` and, where peers write into this rank's recv
// (the reductions), `second`, posted in this rank's inline slot for the call at `base` (before
// the raise that publishes them), read from rank r's after r's flag reached them (`which`: 0 for
// p, 1 for second).
void post_user_buffer(PeerMemory& pm, std::uint64_t base, const void* p, const void* second = nullptr);
RemoteBuffer user_buffer(const PeerMemory& pm, int r, std::uint64_t base, int which = 0);
// kernel_read of `bytes` at `offset` of rank `peer`'s posted buffer into dst, or kernel_write of
// src there; a failure throws TransportError naming `algo`, the peer and the OS error.
void read_user_buffer(Transport& t, std::string_view algo, int peer, const RemoteBuffer& src, std::size_t offset,
                      void* dst, std::size_t bytes);
void write_user_buffer(Transport& t, std::string_view algo, int peer, const RemoteBuffer& dst, std::size_t offset,
                       const void* src, std::size_t bytes);

// A sliced reduction (allreduce, reduce) of one round of unregistered buffers by the kernel's
// single copy, where kernel_reduces() says so: nothing is staged. Rank r reads slice r of every
// peer's send (process_vm_readv) into scratch `scratch_name`, reduces it with its own, and writes
// the result by process_vm_writev into the recv of rank `to` (reduce's root), or of every peer
// with `to` -1 (allreduce); its own recv's slice it reduces into directly. So no rank loads a
// line another core has just written: a peer's unchanged send is read from the reader's own
// cache, as the library's kernel copy reads it, where the staged rounds load the staged slices
// and the reduced ones that way. Slice r is reduced in rank order from rank `to` (from r with
// -1), as the staged rounds reduce it: the same bits. In place is safe: only rank r reads or
// writes slice r of any buffer, and it reads a peer's before it writes it. Every rank posts its
// send and recv; the call settles (peers read its send and write its recv). Collective.
void kernel_sliced_round(Transport& t, PeerMemory& pm, const CollArgs& a, std::string_view algo,
                         std::string_view scratch_name, int to);
// Whether a staged sliced reduction of `a` on n ranks goes by kernel_sliced_round: from
// kSmallBytes of message, each rank's slice (M/n: what it reads of every peer's send) where the
// run measured the kernel's copy faster, up to the largest block it measured. Beyond that the
// peers' sends no longer stay in the readers' caches from call to call and staging wins (2 ranks,
// Xeon VM: a reduce this way 1.46x the library at 4 MiB against staged 1.17x, at 16 MiB 1.04x
// against 1.36x; bench/README.md).
bool kernel_reduces(const PeerMemory& pm, int n, const CollArgs& a);

// Streaming stores (core/stream_copy.hpp) for a call's final copies into the caller's recv, where
// they measure faster: a plain store first reads the line it writes and later writes it back, a
// streaming one only writes it. Beyond the core's private cache, where the recv is not kept
// anyway, that saves a third of a copy's memory traffic (2-vCPU Xeon VM: 1.15-1.6x memcpy's rate
// from 2 MiB, 0.5-1.06x below: bench/README.md); a caller reading its recv at once then reads it
// from memory, as it would beyond the caches. Which wins from what size depends on the machine's
// caches: measure_streaming (peer_probes.hpp) times both.
// Whether a call whose output (the recv it writes) is `output_bytes` streams its final copies.
bool streams(const PeerMemory& pm, std::size_t output_bytes);
// A final copy into the caller's recv: stream_copy with `stream` (streams()), else m.copy.
void copy_out(MemorySpace& m, bool stream, void* dst, const void* src, std::size_t bytes);

// `a` cut to its first round of `step` elements (stage_step): the traffic a claim rule weighs.
CollArgs first_round(const CollArgs& a, std::size_t step);

// copy_out(m, stream, dst, src, bytes) of a peer's block this rank is the one reader of, in
// segments of segment_bytes(pm, a), each claimed right after its copy (with `claim`) while its
// lines are in this core's caches.
void copy_claiming(const PeerMemory& pm, MemorySpace& m, const CollArgs& a, bool claim, void* dst, const void* src,
                   std::size_t bytes, bool stream = false);

// Which inputs reduce_inputs() claims, each segment right after it is reduced: every input of a
// peer_inputs() list that began at rank `first` but this rank's own (its user buffer, never
// written). Only for inputs nobody else reads.
struct ClaimPeers {
  int rank, size, first;
};

// The inputs of an n-way reduction over peer memory, in rank order starting at `first`:
// rank k's address of `in` (this rank's input block, staged or registered) once k's flag has
// reached `ready`; this rank's own entry is `own` (its input in the user's buffer). Starting
// at the rank whose input the output aliases keeps reduce_inputs' aliasing rule.
void peer_inputs(PeerMemory& pm, const void* in, const void* own, std::uint64_t ready, int first,
                 std::span<const void*> out);

// out[0, count) = inputs[0] (op) inputs[1] (op) ... over `inputs`, in segments of
// segment_bytes(pm, a); out may alias inputs[0]. With `claim`, the peers' inputs are
// claimed segment by segment.
void reduce_inputs(const PeerMemory& pm, MemorySpace& m, const CollArgs& a, void* out,
                   std::span<const void* const> inputs, std::size_t count, const ClaimPeers* claim = nullptr);

}  // namespace collbench::schedules::peer
