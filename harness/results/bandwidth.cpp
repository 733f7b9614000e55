#include "harness/results/bandwidth.hpp"

#include <algorithm>

namespace collbench {

double algbw_GBps(std::uint64_t bytes, double time_us) {
  return time_us > 0 ? static_cast<double>(bytes) / time_us / 1e3 : 0.0;  // bytes/us = 1e6 B/s
}

double inter_node_factor(Op op, int nodes, int ranks_per_node) {
  if (nodes <= 1) return 0;
  const double n = nodes, off = (n - 1) / n;  // the share of the data held on other nodes
  switch (op) {
    case Op::allreduce:
      return 2 * off;
    case Op::allgather:
    case Op::reduce_scatter:
    case Op::gather:
    case Op::scatter:
      return off;
    case Op::broadcast:
    case Op::reduce:
      return 1;
    case Op::alltoall:
      return ranks_per_node * off;
  }
  return 0;
}

std::optional<double> link_bound_s(Op op, std::uint64_t bytes, int world_size, int nodes, int ranks_per_node,
                                   const LinkRates& rates) {
  const double s = static_cast<double>(bytes);
  const double per_rank = busbw_factor(op, world_size) * s;
  if (per_rank <= 0) return std::nullopt;  // one rank: no link is crossed
  double fastest = 0;  // GB/s
  if (rates.intra) fastest = std::max(fastest, rates.intra->GBps);
  if (nodes > 1) {
    if (!rates.inter || rates.inter->GBps <= 0) return std::nullopt;
    fastest = std::max(fastest, rates.inter->GBps);
  }
  if (fastest <= 0) return std::nullopt;
  double t = per_rank / (fastest * 1e9);
  if (nodes > 1) t = std::max(t, inter_node_factor(op, nodes, ranks_per_node) * s / (rates.inter->GBps * 1e9));
  return t;
}

}  // namespace collbench
