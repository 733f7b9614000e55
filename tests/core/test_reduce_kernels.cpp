#include <gtest/gtest.h>

#include <vector>

#include "collectives/core/reduce_op.hpp"

namespace collbench {
namespace {

template <class T>
T make(int v) {
  if constexpr (std::is_same_v<T, float16>) return to_float16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bfloat16>) return to_bfloat16(static_cast<float>(v));
  else return static_cast<T>(v);
}
template <class T>
double val(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) return to_float(v);
  else return static_cast<double>(v);
}

// Every (dtype, op) kernel agrees with the scalar element-wise definition, at lengths that
// exercise vector bodies and remainders, out-of-place and accumulating in place.
TEST(ReduceKernels, MatchScalarDefinitionEveryDtypeAndOp) {
  for (DType t : kAllDTypes) {
    for (RedOp op : kAllRedOps) {
      visit_dtype(t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (std::size_t n : {0u, 1u, 7u, 31u, 64u, 1000u}) {
          std::vector<T> a(n), b(n), out(n);
          for (std::size_t i = 0; i < n; ++i) {
            a[i] = make<T>(static_cast<int>(i % 13) - 4);
            b[i] = make<T>(static_cast<int>((i * 7) % 11) - 3);
          }
          host_reduce_fn(op, t)(out.data(), a.data(), b.data(), n);
          for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(val(out[i]), val(apply<T>(op, a[i], b[i])))
                << dtype_name(t) << " " << redop_name(op) << " n=" << n << " i=" << i;
          std::vector<T> acc = a;  // in place: out aliases a
          host_reduce_fn(op, t)(acc.data(), acc.data(), b.data(), n);
          for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(val(acc[i]), val(out[i]));
        }
      });
    }
  }
}

TEST(ReduceKernels, IntegersWrapLikeUnsignedArithmetic) {
  EXPECT_EQ(apply<std::int8_t>(RedOp::sum, 127, 1), -128);
  EXPECT_EQ(apply<std::uint8_t>(RedOp::prod, 16, 16), 0);
  EXPECT_EQ(apply<std::int32_t>(RedOp::prod, 1 << 30, 4), 0);
  EXPECT_EQ(apply<std::int64_t>(RedOp::max, -5, 3), 3);
  EXPECT_EQ(apply<std::int64_t>(RedOp::min, -5, 3), -5);
}

TEST(ReduceKernels, HalfTypesRoundOnce) {
  // 2048 + 1 is not representable in float16: rounds to even (2048).
  EXPECT_EQ(to_float(apply<float16>(RedOp::sum, to_float16(2048), to_float16(1))), 2048.0f);
  EXPECT_EQ(to_float(apply<bfloat16>(RedOp::prod, to_bfloat16(3), to_bfloat16(5))), 15.0f);
}

}  // namespace
}  // namespace collbench
