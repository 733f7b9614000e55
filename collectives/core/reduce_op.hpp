#pragma once
// A reduction as algorithms see it: the op, the element type and a type-erased host kernel
// out[i] = a[i] (op) b[i]. `out` may alias `a` or `b` (accumulate in place).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "collectives/core/dtype.hpp"
#include "collectives/core/elementwise.hpp"

namespace collbench {

using ReduceFn = void (*)(void* out, const void* a, const void* b, std::size_t n);

struct ReduceOp {
  RedOp kind = RedOp::sum;
  DType dtype = DType::float32;
  ReduceFn host_fn = nullptr;  // device memory spaces launch their own kernel for (kind, dtype)
};

inline constexpr RedOp kAllRedOps[] = {RedOp::sum, RedOp::prod, RedOp::max, RedOp::min, RedOp::avg};

constexpr std::string_view redop_name(RedOp op) {
  switch (op) {
    case RedOp::sum: return "sum";
    case RedOp::prod: return "prod";
    case RedOp::max: return "max";
    case RedOp::min: return "min";
    case RedOp::avg: return "avg";
  }
  return "?";
}
std::optional<RedOp> parse_redop(std::string_view name);
std::string redop_names();

namespace detail {
extern const ReduceFn kHostReduceTable[8][4];  // [dtype][op] in enum order (reduce_host.cpp)
}
// The vectorised host kernel for (op, dtype); never null. avg's is sum's (its combination).
// Inline: the MPI library entries compare against it on every call.
inline ReduceFn host_reduce_fn(RedOp op, DType dtype) {
  if (op == RedOp::avg) op = RedOp::sum;
  return detail::kHostReduceTable[static_cast<int>(dtype)][static_cast<int>(op)];
}
inline ReduceOp make_reduce_op(RedOp op, DType dtype) { return {op, dtype, host_reduce_fn(op, dtype)}; }

}  // namespace collbench
