#pragma once
// Bandwidth model, in one place like nccl-tests' *GetBw functions. Pure functions.
#include <cstdint>
#include <optional>
#include <string>

#include "collectives/collective.hpp"

namespace collbench {

// algbw = bytes / time, in GB/s with GB = 1e9 bytes. 0 when time is not positive.
double algbw_GBps(std::uint64_t bytes, double time_us);

// busbw / algbw for `op` on `n` ranks: OpTraits::busbw, the factors of nccl-tests
// doc/PERFORMANCE.md (cited in collectives/op_traits.hpp).
inline double busbw_factor(Op op, int n) { return op_traits(op).busbw.at(n); }

inline double busbw_GBps(Op op, int n, double algbw) { return algbw * busbw_factor(op, n); }

// One link class's rate, measured by the run's link calibration (run record "links").
struct LinkRate {
  double GBps = 0;            // osu_bw bandwidth of the pair: bytes / the fastest sample's time per message
  int src = 0, dst = 0;       // the pair measured
  std::uint64_t bytes = 0;    // message size
  int samples = 0;            // samples taken (0: unknown, an older record)
  double spread = 0;          // the samples' p50 time over the fastest, minus 1: how steady the link was
  std::string src_host, dst_host;  // where the pair ran (a links file reuses a rate on the same hosts only)
  std::string reused_from;         // --links: the file this rate was read from ("": measured by this run)
};
// A calibration whose p50 sample is at most this much slower than its fastest is a steady
// yardstick: the table prints efficiency only then (docs/measurement.md "Efficiency").
inline constexpr double kTightLinkSpread = 0.10;
struct LinkRates {
  std::optional<LinkRate> intra;  // two ranks of one node (absent: no node holds two ranks)
  std::optional<LinkRate> inter;  // ranks on two nodes (absent: one node)
};

// Bytes of an `op` of `bytes` (nccl-tests' size) that must cross each node's inter-node link,
// per `bytes`, on `nodes` nodes of `ranks_per_node` ranks: the nccl-tests busbw argument with
// the nodes as the ranks (allreduce 2(N-1)/N; allgather, reduce_scatter, gather, scatter
// (N-1)/N; broadcast, reduce 1), alltoall p(N-1)/N (each of the node's p ranks sends
// (N-1)/N of its buffer off the node). 0 on one node.
double inter_node_factor(Op op, int nodes, int ranks_per_node);

// The time (s) a point's necessary data movement takes on the links it crosses, at `rates`
// (docs/measurement.md "Efficiency"): the larger of
//   per rank: busbw_factor(op, n) x bytes through one rank's port at the fastest link rate
//             measured (the intra-node one on a single node), and
//   per node: inter_node_factor x bytes through the node's inter-node link (several nodes).
// Null when a needed rate was not measured, or nothing must move (one rank).
std::optional<double> link_bound_s(Op op, std::uint64_t bytes, int world_size, int nodes, int ranks_per_node,
                                   const LinkRates& rates);

}  // namespace collbench
