#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

// The 16-bit float kernels (F16C / vectorised paths) agree bit for bit with the scalar
// definition on every bit pattern of `a` against special and ordinary `b`: zeros, subnormals,
// the largest finite, infinities, quiet and signalling NaNs. Where both operands are NaN,
// which one propagates is not specified; the result must then be a NaN of the same class.
template <class T>
void check_every_pattern() {
  const std::uint16_t specials[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x3c00, 0xbc00, 0x7bff, 0x7c00, 0xfc00,
                                    0x7e00, 0x7c01, 0xfe01, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x3f80, 0x0080};
  std::vector<T> a(0x10000), b(0x10000), out(0x10000), acc(0x10000);
  auto is_nan = [](T v) { return std::isnan(to_float(v)); };
  for (RedOp op : kAllRedOps) {
    for (std::uint16_t s : specials) {
      for (std::uint32_t i = 0; i < 0x10000; ++i) {
        a[i] = T{static_cast<std::uint16_t>(i)};
        b[i] = T{s};
      }
      const DType t = std::is_same_v<T, float16> ? DType::float16 : DType::bfloat16;
      host_reduce_fn(op, t)(out.data(), a.data(), b.data(), a.size());
      acc = a;
      host_reduce_fn(op, t)(acc.data(), acc.data(), b.data(), a.size());
      for (std::uint32_t i = 0; i < 0x10000; ++i) {
        const T want = apply<T>(op, a[i], b[i]);
        for (const T got : {out[i], acc[i]}) {
          if (is_nan(a[i]) && is_nan(b[i])) {
            ASSERT_TRUE(is_nan(got)) << redop_name(op) << " a=" << i << " b=" << s;
          } else {
            ASSERT_EQ(got.bits, want.bits) << redop_name(op) << " a=" << i << " b=" << s;
          }
        }
      }
    }
  }
}

TEST(ReduceKernels, Float16EveryBitPatternMatchesScalar) { check_every_pattern<float16>(); }
TEST(ReduceKernels, BFloat16EveryBitPatternMatchesScalar) { check_every_pattern<bfloat16>(); }

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
