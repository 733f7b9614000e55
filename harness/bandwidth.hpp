#pragma once
// Bandwidth model, in one place like nccl-tests' *GetBw functions. Pure functions.
#include <cstdint>

#include "collectives/collective.hpp"

namespace collbench {

// algbw = bytes / time, in GB/s with GB = 1e9 bytes. 0 when time is not positive.
double algbw_GBps(std::uint64_t bytes, double time_us);

// busbw / algbw for `op` on `n` ranks, from nccl-tests doc/PERFORMANCE.md
// (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md):
// allreduce 2(n-1)/n; allgather, reduce_scatter, alltoall, gather, scatter (n-1)/n;
// broadcast, reduce 1. It makes busbw comparable to the link bandwidth whatever n is.
double busbw_factor(Op op, int n);

inline double busbw_GBps(Op op, int n, double algbw) { return algbw * busbw_factor(op, n); }

}  // namespace collbench
