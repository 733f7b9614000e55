#pragma once
// The run-time micro-benchmarks (probes) the zero-copy calls decide by: whether claiming pays,
// from what size the kernel's single copy beats staging, and from what size streaming stores
// beat plain ones, on this machine. Each is measured once per peer memory, by its first zero-copy
// call (memory_for, peer.hpp), collectively, and every rank keeps rank 0's verdict on the peer
// memory (transport/peer_memory.hpp). The rules that read the verdicts are peer.hpp's.
#include <cstddef>

#include "collectives/transport/peer_memory.hpp"

namespace collbench::schedules::peer {

// Whether claiming pays on this machine, measured: ranks 0 and 1 time whole rounds of one stage
// (stage_bytes: rank 0 rewrites a block of its peer memory, rank 1 copies it and claims it or
// not), kClaimProbeRounds of each alternated after a warm-up; claims pay when the claimed rounds'
// median is below the shared ones'. Collective; 3 ms at 1 MiB. Why measured: on the 2-vCPU AMD
// EPYC VM claimed rounds took 0.19-0.50x the shared ones at 64 KiB - 1 MiB, on the 2-vCPU Xeon
// (Emerald Rapids) VM 1.1-1.5x (bench/cross_core_copy, docs/zero-copy.md): the same lines cost the
// opposite. Not measured with one rank or device memory (claims off) or more ranks than cores
// (the probe's rounds would time the scheduler; claims on, by the LLC rule alone: 4 ranks on 2
// cores measured better with them on both machines). memory_for() runs it on its first call.
inline constexpr int kClaimProbeRounds = 8;
PeerMemory::ClaimProbe measure_claims(PeerMemory& pm);

// The kernel's single copy instead of staging (peer.hpp: kernel_copies): which wins depends on
// the machine and the size, so measure_kernel_copy times both as a 2-rank allgather moves them:
// ranks 0 and 1 exchange kKernelProbeMin x 4^i bytes up to stage_bytes, kKernelProbeRounds whole
// rounds of each alternated after a warm-up; in a staged round each copies its buffer into a
// block of peer memory and the peer's out of it (claimed where claims pay), in a kernel round
// each kernel_reads the peer's buffer; a round ends when both are done.
// from_bytes is the smallest size from which the kernel's round was faster at every larger size
// probed; 0 (never) where it lost at the largest, or rank 0 or 1 could not read (no rights: EPERM).
// Collective; after measure_claims. Not measured with one rank, device memory or more ranks than
// cores (the rounds would time the scheduler): never. memory_for() runs it on its first call.
inline constexpr std::size_t kKernelProbeMin = 4 << 10;
inline constexpr int kKernelProbeRounds = 8;
PeerMemory::KernelCopyProbe measure_kernel_copy(PeerMemory& pm);

// Streaming stores for a call's final copies (peer.hpp: streams): which wins from what size
// depends on the machine's caches, so measure_streaming times both as a zero-copy call makes
// them: ranks 0 and 1 each copy a private buffer at kStreamProbeSizes sizes (half the L2 x 2^i,
// the L2 within 256 KiB - 4 MiB, 1 MiB when unknown), starting together, kStreamProbeRounds
// copies of each kind in two runs of each, alternated, each run's first copy untimed (a plain
// copy right after a streaming one finds its destination evicted, which a call repeated on one
// recv never does); rank 0 times its own. from_bytes is the smallest size from which streaming took at most
// kStreamProbeMargin of memcpy's time at every larger size probed; 0 (never) where it did not at
// the largest. The margin keeps a size where the two are level (1 MiB on the Xeon VM: 0.9-1.2x,
// run to run) from flipping the verdict between otherwise identical runs. Collective; not
// measured with one rank, device memory or more ranks than cores: never. memory_for() runs it on
// its first call.
inline constexpr int kStreamProbeSizes = 3, kStreamProbeRounds = 6;
inline constexpr double kStreamProbeMargin = 0.9;
PeerMemory::StreamProbe measure_streaming(PeerMemory& pm);

}  // namespace collbench::schedules::peer
