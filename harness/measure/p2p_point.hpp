#pragma once
// Measuring one size of a pingpong block (`--op pingpong`): for each selected rank pair, the
// OSU-style method (harness/plan/p2p_method.hpp) timed on that pair alone while every other rank
// waits, then the payload verified. One PointResult per pair, with src, dst and link.
#include <span>
#include <vector>

#include "harness/measure/collective_point.hpp"
#include "harness/plan/pairs.hpp"
#include "harness/results/links_file.hpp"

namespace collbench {

// The rank pairs the block measures (--pairs against the topology), in order.
std::vector<SelectedPair> p2p_pairs(const PointEnv& env, const P2pBlock& block);

// The record of (block, size, pair) before anything is measured: its identity fields only.
PointResult p2p_base_result(const PointEnv& env, const P2pBlock& block, const SizePoint& size, const SelectedPair& pair);

// Measures `pairs` one after the other. Collective over all ranks; all ranks return the same
// results, in pair order.
std::vector<PointResult> measure_p2p_pairs(PointEnv& env, const P2pBlock& block, const SizePoint& size,
                                           std::span<const SelectedPair> pairs);
// Every pair of the block.
std::vector<PointResult> measure_p2p_size(PointEnv& env, const P2pBlock& block, const SizePoint& size);

// Receive slots of a window at `bytes` per message: one per message (kP2pWindow) while they fit
// in 64 MiB, else as many as fit (at least 1), reused round-robin. (OSU receives a whole window
// into one buffer, which MPI does not allow for concurrently pending receives.)
std::size_t p2p_recv_slots(P2pMethod m, std::uint64_t bytes);

// The run's link calibration (run record "links"), before the first point: osu_bw (the `bw`
// method) at kLinkBytes between the --pairs auto pairs (the first two ranks sharing a node, and
// rank 0 with the first rank on another node), the fastest of kLinkIters samples after one
// warm-up, with the samples' spread (LinkRate::spread), unverified, received into kLinkSlots
// buffers round-robin. Collective; every rank returns the same rates. Nothing on a world of
// one rank. 30 samples, not 10: the fastest of 10 moved 12.4-23.6 GB/s between runs minutes apart
// (2 ranks, one VM), and the spread needs enough samples to have a median.
inline constexpr std::uint64_t kLinkBytes = 1 << 20;
inline constexpr int kLinkIters = 30;
inline constexpr std::size_t kLinkSlots = 4;
inline constexpr double kLinkMinTimeoutS = 30;  // the calibration's bound: the plan's --timeout, at least this
// `known` (--links): a rate it holds for a pair's class, backend, device and hosts is reused,
// not measured (links_file.hpp).
LinkRates calibrate_links(PointEnv& env, double timeout_s, const LinksFile* known = nullptr);

}  // namespace collbench
