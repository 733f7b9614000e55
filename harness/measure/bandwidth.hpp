#pragma once
// Bandwidth model, in one place like nccl-tests' *GetBw functions. Pure functions.
#include <cstdint>

#include "collectives/collective.hpp"

namespace collbench {

// algbw = bytes / time, in GB/s with GB = 1e9 bytes. 0 when time is not positive.
double algbw_GBps(std::uint64_t bytes, double time_us);

// busbw / algbw for `op` on `n` ranks: OpTraits::busbw, the factors of nccl-tests
// doc/PERFORMANCE.md (cited in collectives/op_traits.hpp).
inline double busbw_factor(Op op, int n) { return op_traits(op).busbw.at(n); }

inline double busbw_GBps(Op op, int n, double algbw) { return algbw * busbw_factor(op, n); }

}  // namespace collbench
