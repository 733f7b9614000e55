#include "collectives/schedules/peer.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "collectives/core/stream_copy.hpp"
#include "collectives/patterns/chunks.hpp"
#include "collectives/schedules/defaults.hpp"

namespace collbench::schedules::peer {

PeerMemory& memory_for(Transport& t, std::string_view algo) {
  const MemoryKind kind = t.memory().kind();
  PeerMemory* pm = t.peer_memory();  // collective on the first call: before any refusal
  if (!pm)
    throw NotSupported(std::string(algo) + ": needs every rank on one node (peer memory; " + std::string(t.backend()) +
                       (kind == MemoryKind::host ? (t.node_layout().nodes() > 1 ? " found ranks on other nodes)"
                                                                                 : " has none: its ranks share only sockets)")
                                                 : " has none for device buffers: CUDA IPC comes with --backend mpi)"));
  if (pm->kind() != kind)
    throw NotSupported(std::string(algo) + ": the peer memory is " + std::string(memory_kind_name(pm->kind())) +
                       " memory, the buffers " + std::string(memory_kind_name(kind)));
  if (!pm->claim_probe()) pm->set_claim_probe(measure_claims(*pm));  // collective, as this call
  if (!pm->kernel_copy_probe()) pm->set_kernel_copy_probe(measure_kernel_copy(*pm));
  if (!pm->stream_probe()) pm->set_stream_probe(measure_streaming(*pm));
  return *pm;
}

bool words_fit(const PeerMemory& pm, std::size_t bytes) {
  return pm.kind() == MemoryKind::host && bytes <= PeerMemory::kMaxWordBytes && pm.has_words();
}

std::uint64_t exchange_words(PeerMemory& pm, const void* in, std::size_t bytes, std::span<Words> words, int from) {
  constexpr std::uint64_t kPosted = 1;
  auto posted = [&](int k) { return from < 0 || k == from ? bytes : 0; };
  const std::uint64_t base = pm.begin_call();
  pm.post_word(base + kPosted, in, posted(pm.rank()));
  for (int k = 0; k < pm.size(); ++k) {
    const auto uk = static_cast<std::size_t>(k);
    if (k != pm.rank())
      pm.wait_word(k, base + kPosted, words[uk].data(), posted(k));
    else if (posted(k))  // in is null for 0 bytes
      std::memcpy(words[uk].data(), in, bytes);
  }
  return base;
}

bool streams(const PeerMemory& pm, std::size_t output_bytes) {
  const auto& p = pm.stream_probe();
  return pm.kind() == MemoryKind::host && p && p->from_bytes && output_bytes >= p->from_bytes;
}

void copy_out(MemorySpace& m, bool stream, void* dst, const void* src, std::size_t bytes) {
  if (stream)
    stream_copy(dst, src, bytes);
  else
    m.copy(dst, src, bytes);
}

bool kernel_copies(const PeerMemory& pm, std::size_t bytes, bool within_probe) {
  const auto& p = pm.kernel_copy_probe();
  return pm.kind() == MemoryKind::host && p && p->from_bytes && bytes >= p->from_bytes &&
         (!within_probe || (!p->bytes.empty() && bytes <= p->bytes.back()));
}

namespace {

struct PostedBuffers {  // one rank's inline slot in a kernel-copy call
  std::int64_t pid;
  const void* p[2];
};
static_assert(sizeof(PostedBuffers) <= PeerMemory::kInlineBytes);

// how: "(process_vm_readv) of" or "(process_vm_writev) into".
[[noreturn]] void kernel_copy_failed(Transport& t, std::string_view algo, const char* how, int peer, std::size_t bytes,
                                     int error) {
  ErrorContext ctx = t.error_context();
  ctx.peer = peer;
  ctx.bytes = bytes;
  throw TransportError(std::string(algo) + ": the kernel's copy " + how + " rank " + std::to_string(peer) +
                           "'s buffer failed: " + std::strerror(error),
                       std::move(ctx));
}

}  // namespace

void post_user_buffer(PeerMemory& pm, std::uint64_t base, const void* p, const void* second) {
  const PostedBuffers b{local_buffer(p).pid, {p, second}};
  std::memcpy(pm.inline_slot(pm.rank(), base), &b, sizeof b);
}

RemoteBuffer user_buffer(const PeerMemory& pm, int r, std::uint64_t base, int which) {
  PostedBuffers b;
  std::memcpy(&b, pm.inline_slot(r, base), sizeof b);
  return {b.pid, b.p[which]};
}

void read_user_buffer(Transport& t, std::string_view algo, int peer, const RemoteBuffer& src, std::size_t offset,
                      void* dst, std::size_t bytes) {
  if (const int e = kernel_read(src, offset, dst, bytes))
    kernel_copy_failed(t, algo, "(process_vm_readv) of", peer, bytes, e);
}

void write_user_buffer(Transport& t, std::string_view algo, int peer, const RemoteBuffer& dst, std::size_t offset,
                       const void* src, std::size_t bytes) {
  if (const int e = kernel_write(dst, offset, src, bytes))
    kernel_copy_failed(t, algo, "(process_vm_writev) into", peer, bytes, e);
}

bool kernel_reduces(const PeerMemory& pm, int n, const CollArgs& a) {
  const std::size_t bytes = a.bytes(a.count);
  return bytes >= kSmallBytes && kernel_copies(pm, bytes / static_cast<std::size_t>(n), true);
}

void kernel_sliced_round(Transport& t, PeerMemory& pm, const CollArgs& a, std::string_view algo,
                         std::string_view scratch_name, int to) {
  constexpr std::uint64_t kInputsReady = 1;
  const int n = t.size(), r = t.rank(), first = to < 0 ? r : to;
  const patterns::Range mine = patterns::chunk(a.count, n, r);
  const std::size_t slice = a.bytes(mine.count), at = a.bytes(mine.offset);
  const std::size_t most = a.bytes((a.count + static_cast<std::size_t>(n) - 1) / static_cast<std::size_t>(n));
  auto* area = static_cast<std::byte*>(pm.scratch(scratch_name, most * static_cast<std::size_t>(n - 1)));
  const std::uint64_t base = pm.begin_call();
  post_user_buffer(pm, base, a.send, a.recv);
  pm.raise(base + kInputsReady);
  RankPointers inputs(n);
  const auto index = [&](int k) { return static_cast<std::size_t>((k - first + n) % n); };
  inputs[index(r)] = elem_ptr(a.send, mine.offset, a.dtype);
  for (int i = 1; i < n; ++i) {  // staggered: rank r starts with r + 1, so owners are read evenly
    const int k = (r + i) % n;
    std::byte* copy = area + static_cast<std::size_t>(i - 1) * most;
    pm.wait(k, base + kInputsReady);
    read_user_buffer(t, algo, k, user_buffer(pm, k, base), at, copy, slice);
    inputs[index(k)] = copy;
  }
  // The output may alias inputs[0] (reduce_inputs): this rank's own slice when it comes first
  // (in place, recv's slice is send's), else (reduce's non-roots) the copy of the root's slice.
  void* out = to < 0 || r == to ? elem_ptr(a.recv, mine.offset, a.dtype) : const_cast<void*>(inputs[0]);
  reduce_inputs(pm, t.memory(), a, out, inputs, mine.count);
  for (int i = 1; i < n; ++i) {
    const int k = (r + i) % n;
    if (to < 0 || k == to) write_user_buffer(t, algo, k, user_buffer(pm, k, base, 1), at, out, slice);
  }
  pm.end_call(base, true);
}

bool registered(const PeerMemory& pm, const CollArgs& a, std::size_t send_bytes, std::size_t recv_bytes) {
  return pm.owns(a.send, send_bytes) && (recv_bytes == 0 || pm.owns(a.recv, recv_bytes));
}

void stage_except(MemorySpace& m, void* stage, const void* src, std::size_t bytes, std::size_t skip_begin,
                  std::size_t skip_end) {
  m.copy(stage, src, skip_begin);
  m.copy(static_cast<std::byte*>(stage) + skip_end, static_cast<const std::byte*>(src) + skip_end, bytes - skip_end);
}

void claim(const void* p, std::size_t bytes) {
  constexpr std::uintptr_t kLine = 64;
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kLine - 1) / kLine * kLine;
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) / kLine * kLine;
  // Atomic, relaxed: a plain store of the value just loaded is one the compiler may drop.
  for (std::uintptr_t line = begin; line < end; line += kLine) {
    std::atomic_ref<std::uint64_t> word(*reinterpret_cast<std::uint64_t*>(line));
    word.store(word.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
}

double claim_max_traffic(const PeerMemory& pm) {
  const bool pays = pm.kind() == MemoryKind::host && pm.claim_probe() && pm.claim_probe()->pays;
  return pays ? kClaimLlcMultiple * static_cast<double>(pm.llc_bytes()) : 0;
}

std::size_t stage_bytes(const PeerMemory& pm) { return stage_bytes_for(pm.l2_bytes()); }

std::size_t segment_bytes(const PeerMemory& pm, const CollArgs& a) {
  if (a.segment_bytes) return a.segment_bytes;
  return pm.kind() == MemoryKind::host ? segment_bytes_for(pm.l1_bytes()) : kSegmentBytes;
}

CollArgs first_round(const CollArgs& a, std::size_t step) {
  CollArgs r = a;
  r.count = std::min(a.count, step);
  return r;
}

bool claims(const PeerMemory& pm, double traffic_bytes) {
  const double max = claim_max_traffic(pm);
  return max > 0 && traffic_bytes <= max;  // never on device memory, even for an empty call
}

void copy_claiming(const PeerMemory& pm, MemorySpace& m, const CollArgs& a, bool claim_it, void* dst, const void* src,
                   std::size_t bytes, bool stream) {
  if (!claim_it) return copy_out(m, stream, dst, src, bytes);
  const std::size_t seg = segment_bytes(pm, a);
  for (std::size_t off = 0; off < bytes; off += seg) {
    const std::size_t k = std::min(seg, bytes - off);
    copy_out(m, stream, static_cast<std::byte*>(dst) + off, static_cast<const std::byte*>(src) + off, k);
    claim(static_cast<const std::byte*>(src) + off, k);
  }
}

void peer_inputs(PeerMemory& pm, const void* in, const void* own, std::uint64_t ready, int first,
                 std::span<const void*> out) {
  const int n = pm.size(), me = pm.rank();
  for (int i = 0; i < n; ++i) {
    const int k = (first + i) % n;
    if (k != me) pm.wait(k, ready);
    out[static_cast<std::size_t>(i)] = k == me ? own : pm.peer(in, k);
  }
}

void reduce_inputs(const PeerMemory& pm, MemorySpace& m, const CollArgs& a, void* out,
                   std::span<const void* const> inputs, std::size_t count, const ClaimPeers* claim_peers) {
  if (inputs.size() == 1) {
    m.copy(out, inputs[0], a.bytes(count));
    return;
  }
  const std::size_t seg = std::max<std::size_t>(1, segment_bytes(pm, a) / a.elem_size());
  for (std::size_t off = 0; off < count; off += seg) {
    const std::size_t k = std::min(seg, count - off);
    void* o = elem_ptr(out, off, a.dtype);
    m.reduce(a.op, o, elem_ptr(inputs[0], off, a.dtype), elem_ptr(inputs[1], off, a.dtype), k);
    for (std::size_t i = 2; i < inputs.size(); ++i) m.reduce(a.op, o, o, elem_ptr(inputs[i], off, a.dtype), k);
    if (!claim_peers) continue;
    const int n = claim_peers->size;
    const auto own = static_cast<std::size_t>((claim_peers->rank - claim_peers->first + n) % n);
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (i != own) claim(elem_ptr(inputs[i], off, a.dtype), a.bytes(k));
  }
}

}  // namespace collbench::schedules::peer
