// The probes (peer_probes.hpp): each a collective micro-benchmark of ranks 0 and 1 over the peer
// memory, whose verdict rank 0 shares with every rank.
#include "collectives/schedules/peer_probes.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <utility>
#include <vector>

#include "collectives/core/stream_copy.hpp"
#include "collectives/schedules/peer.hpp"

namespace collbench::schedules::peer {

namespace {
double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// A probe's result from rank `from` to every rank, through `block` (this rank's address of a
// block of at least `bytes`): one call, settled, so the block may be freed after it.
void share(PeerMemory& pm, void* block, int from, void* data, std::size_t bytes) {
  const std::uint64_t base = pm.begin_call();
  if (pm.rank() == from) {
    std::memcpy(block, data, bytes);
    pm.raise(base + 1);
  } else {
    pm.wait(from, base + 1);
    std::memcpy(data, pm.peer(block, from), bytes);
  }
  pm.end_call(base, true);
}
}  // namespace

PeerMemory::ClaimProbe measure_claims(PeerMemory& pm) {
  PeerMemory::ClaimProbe p;
  const std::size_t bytes = p.bytes = stage_bytes(pm);
  if (pm.kind() != MemoryKind::host || pm.size() < 2) return p;
  // More ranks than cores: rounds would time the scheduler. Claims stay on (by the LLC rule), as
  // they measured better there on both machines (bench/README.md, target 10).
  p.pays = pm.oversubscribed();
  if (p.pays) return p;
  constexpr int kWarmRounds = 2;
  auto* block = static_cast<std::byte*>(pm.allocate(bytes));  // collective
  std::vector<std::byte> copy(pm.rank() == 1 ? bytes : 0);
  std::vector<double> round_ns[2];  // [claimed]
  for (int i = 0; i < 2 * (kWarmRounds + kClaimProbeRounds); ++i) {
    const bool claimed = i % 2;
    const std::uint64_t base = pm.begin_call();  // waits for the previous round's reader
    if (pm.rank() == 0) {
      const auto t0 = std::chrono::steady_clock::now();
      std::memset(block, i & 0xff, bytes);  // lines the reader read (and claimed) last round
      pm.raise(base + 1);
      pm.wait(1, base + 2);
      const std::chrono::duration<double, std::nano> ns = std::chrono::steady_clock::now() - t0;
      if (i >= 2 * kWarmRounds) round_ns[claimed].push_back(ns.count());
    } else if (pm.rank() == 1) {
      pm.wait(0, base + 1);
      const std::byte* src = pm.peer(block, 0);
      std::memcpy(copy.data(), src, bytes);
      if (claimed) claim(src, bytes);
      pm.raise(base + 2);
    }
    pm.end_call(base, false);
  }
  double verdict[2] = {};  // rank 0's, to every rank
  if (pm.rank() == 0) {
    verdict[0] = median(round_ns[0]);
    verdict[1] = median(round_ns[1]);
  }
  share(pm, block, 0, verdict, sizeof verdict);
  pm.deallocate(block);  // collective
  p.measured = true;
  p.shared_ns = verdict[0];
  p.claimed_ns = verdict[1];
  p.pays = p.claimed_ns < p.shared_ns;
  return p;
}

PeerMemory::KernelCopyProbe measure_kernel_copy(PeerMemory& pm) {
  PeerMemory::KernelCopyProbe p;
  if (pm.kind() != MemoryKind::host || pm.size() < 2 || pm.oversubscribed()) return p;
  const std::size_t max = stage_bytes(pm);
  for (std::size_t b = kKernelProbeMin; b <= max; b *= 4) p.bytes.push_back(b);
  constexpr int kWarmRounds = 2;
  constexpr std::size_t kMaxSizes = 8;  // 4 KiB x 4^7 = 64 MiB: beyond any stage
  struct Verdict {
    int error = 0;  // the errno of the first failed kernel_read, rank 0's or else rank 1's
    double staged_ns[kMaxSizes], kernel_ns[kMaxSizes];
  } v{};
  auto* block = static_cast<std::byte*>(pm.allocate(std::max(max, sizeof v)));  // collective
  const bool pair = pm.rank() < 2;  // ranks 0 and 1 exchange; the others only keep the calls' count
  const int peer = 1 - pm.rank();
  // A "user buffer" of each, and where each copies its peer's.
  std::vector<std::byte> user(pair ? max : 0, std::byte{1}), copy(pair ? max : 0);
  const bool claim_stage = pm.claim_probe() && pm.claim_probe()->pays;
  for (std::size_t j = 0; j < p.bytes.size(); ++j) {
    const std::size_t bytes = p.bytes[j];
    std::vector<double> round_ns[2];  // [kernel]
    for (int i = 0; i < 2 * (kWarmRounds + kKernelProbeRounds); ++i) {
      const bool kernel = i % 2;
      const std::uint64_t base = pm.begin_call();  // waits for the previous round's readers
      if (pair) {
        const auto t0 = std::chrono::steady_clock::now();
        if (kernel)
          post_user_buffer(pm, base, user.data());
        else
          std::memcpy(block, user.data(), bytes);  // the staging copy, into lines the peer read
        pm.raise(base + 1);
        pm.wait(peer, base + 1);
        if (kernel) {
          const int e = kernel_read(user_buffer(pm, peer, base), 0, copy.data(), bytes);
          if (!v.error) v.error = e;
        } else {
          const std::byte* src = pm.peer(block, peer);
          std::memcpy(copy.data(), src, bytes);
          if (claim_stage) claim(src, bytes);
        }
        pm.raise(base + 2);
        pm.wait(peer, base + 2);  // both copies done: the call's end
        const std::chrono::duration<double, std::nano> ns = std::chrono::steady_clock::now() - t0;
        if (i >= 2 * kWarmRounds) round_ns[kernel].push_back(ns.count());
      }
      pm.end_call(base, false);  // the user buffers live until the probe's end
    }
    if (pm.rank() == 0) {
      v.staged_ns[j] = median(std::move(round_ns[0]));
      v.kernel_ns[j] = median(std::move(round_ns[1]));
    }
  }
  // Rank 1's error to rank 0, then rank 0's verdict to every rank.
  int error1 = v.error;
  share(pm, block, 1, &error1, sizeof error1);
  if (pm.rank() == 0 && !v.error) v.error = error1;
  share(pm, block, 0, &v, sizeof v);
  pm.deallocate(block);  // collective
  p.measured = true;
  p.available = v.error == 0;
  p.staged_ns.assign(v.staged_ns, v.staged_ns + p.bytes.size());
  p.kernel_ns.assign(v.kernel_ns, v.kernel_ns + p.bytes.size());
  // The smallest size from which the kernel won at every larger size probed.
  for (std::size_t j = p.bytes.size(); p.available && j-- > 0 && p.kernel_ns[j] < p.staged_ns[j];)
    p.from_bytes = p.bytes[j];
  return p;
}

PeerMemory::StreamProbe measure_streaming(PeerMemory& pm) {
  PeerMemory::StreamProbe p;
  if (pm.kind() != MemoryKind::host || pm.size() < 2 || pm.oversubscribed()) return p;
  const std::size_t l2 = pm.l2_bytes() ? std::clamp<std::size_t>(std::bit_floor(pm.l2_bytes()), 256 << 10, 4 << 20)
                                       : std::size_t{1} << 20;
  for (int i = 0; i < kStreamProbeSizes; ++i) p.bytes.push_back(l2 / 2 << i);
  constexpr int kRun = 1 + kStreamProbeRounds / 2, kRuns = 4;  // plain, streaming, plain, streaming
  struct Verdict {
    double plain_ns[kStreamProbeSizes], streaming_ns[kStreamProbeSizes];
  } v{};
  auto* block = pm.allocate(sizeof v);  // collective: for the verdict
  const bool pair = pm.rank() < 2;  // ranks 0 and 1 copy; the others only keep the calls' count
  const int peer = 1 - pm.rank();
  std::vector<std::byte> src(pair ? p.bytes.back() : 0, std::byte{1}), dst(src.size());
  for (std::size_t j = 0; j < p.bytes.size(); ++j) {
    std::vector<double> ns[2];  // [streaming]
    for (int i = 0; i < kRuns * kRun; ++i) {
      const bool streaming = (i / kRun) % 2;
      const std::uint64_t base = pm.begin_call();
      if (pair) {
        pm.raise(base + 1);
        pm.wait(peer, base + 1);  // both copy at once, as a call's ranks do
        const auto t0 = std::chrono::steady_clock::now();
        if (streaming)
          stream_copy(dst.data(), src.data(), p.bytes[j]);
        else
          std::memcpy(dst.data(), src.data(), p.bytes[j]);
        const std::chrono::duration<double, std::nano> t = std::chrono::steady_clock::now() - t0;
        if (i % kRun) ns[streaming].push_back(t.count());
      }
      pm.end_call(base, false);  // nothing of a peer's was read
    }
    if (pm.rank() == 0) {
      v.plain_ns[j] = median(std::move(ns[0]));
      v.streaming_ns[j] = median(std::move(ns[1]));
    }
  }
  share(pm, block, 0, &v, sizeof v);
  pm.deallocate(block);  // collective
  p.measured = true;
  p.plain_ns.assign(v.plain_ns, v.plain_ns + p.bytes.size());
  p.streaming_ns.assign(v.streaming_ns, v.streaming_ns + p.bytes.size());
  // The smallest size from which streaming won, by the margin, at every larger size probed.
  for (std::size_t j = p.bytes.size(); j-- > 0 && p.streaming_ns[j] <= kStreamProbeMargin * p.plain_ns[j];)
    p.from_bytes = p.bytes[j];
  return p;
}

}  // namespace collbench::schedules::peer
