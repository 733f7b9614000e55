// Host reduce kernels: the roofline of every reducing algorithm. One plain loop per
// (dtype, op) that GCC vectorises; target_clones adds an AVX2 version chosen at load time
// (ifunc), so one binary runs everywhere and uses 256-bit vectors where the CPU has them.
#include <cstdint>

#include "collectives/core/reduce_op.hpp"

namespace collbench {
namespace {

template <class T, RedOp Op>
inline void reduce_loop(void* out, const void* a, const void* b, std::size_t n) {
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (std::size_t i = 0; i < n; ++i) o[i] = apply<T, Op>(x[i], y[i]);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define CB_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CB_TARGET_CLONES
#endif

// target_clones needs named non-template functions; one per (dtype, op).
#define CB_KERNEL(T, NAME, OP)                                                            \
  CB_TARGET_CLONES void NAME##_##OP(void* o, const void* a, const void* b, std::size_t n) { \
    reduce_loop<T, RedOp::OP>(o, a, b, n);                                                 \
  }
#define CB_KERNELS(T, NAME) CB_KERNEL(T, NAME, sum) CB_KERNEL(T, NAME, prod) CB_KERNEL(T, NAME, max) CB_KERNEL(T, NAME, min)

CB_KERNELS(std::int8_t, i8)
CB_KERNELS(std::uint8_t, u8)
CB_KERNELS(std::int32_t, i32)
CB_KERNELS(std::int64_t, i64)
CB_KERNELS(float16, f16)
CB_KERNELS(bfloat16, bf16)
CB_KERNELS(float, f32)
CB_KERNELS(double, f64)

#define CB_ROW(NAME) {NAME##_sum, NAME##_prod, NAME##_max, NAME##_min}
// Indexed [dtype][op] in enum order.
constexpr ReduceFn kTable[8][4] = {CB_ROW(i8),  CB_ROW(u8),   CB_ROW(i32), CB_ROW(i64),
                                   CB_ROW(f16), CB_ROW(bf16), CB_ROW(f32), CB_ROW(f64)};

}  // namespace

ReduceFn host_reduce_fn(RedOp op, DType dtype) {
  return kTable[static_cast<int>(dtype)][static_cast<int>(op)];
}

std::optional<RedOp> parse_redop(std::string_view name) {
  for (RedOp op : kAllRedOps)
    if (name == redop_name(op)) return op;
  return std::nullopt;
}

std::string redop_names() { return "sum, prod, max, min"; }

}  // namespace collbench
