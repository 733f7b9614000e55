#include "harness/bandwidth.hpp"

namespace collbench {

double algbw_GBps(std::uint64_t bytes, double time_us) {
  return time_us > 0 ? static_cast<double>(bytes) / time_us / 1e3 : 0.0;  // bytes/us = 1e6 B/s
}

double busbw_factor(Op op, int n) {
  const double nd = n;
  switch (op) {
    case Op::allreduce: return 2.0 * (nd - 1) / nd;
    case Op::allgather:
    case Op::reduce_scatter:
    case Op::alltoall:
    case Op::gather:
    case Op::scatter: return (nd - 1) / nd;
    case Op::broadcast:
    case Op::reduce: return 1.0;
  }
  return 1.0;
}

}  // namespace collbench
