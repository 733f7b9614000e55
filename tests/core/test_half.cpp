#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "collectives/core/half.hpp"

namespace collbench {
namespace {

TEST(Half, EveryFloat16RoundTripsThroughFloat) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const float16 h{static_cast<std::uint16_t>(b)};
    const float f = to_float(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(to_float(to_float16(f)))) << b;
      continue;
    }
    EXPECT_EQ(to_float16(f).bits, h.bits) << "bits " << b;
  }
}

TEST(Half, Float16KnownValues) {
  EXPECT_EQ(to_float16(1.0f).bits, 0x3c00);
  EXPECT_EQ(to_float16(-2.0f).bits, 0xc000);
  EXPECT_EQ(to_float16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(to_float16(65520.0f).bits, 0x7c00);  // rounds up to infinity
  EXPECT_EQ(to_float16(5.9604645e-08f).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(to_float(float16{0x0001}), 5.9604645e-08f);
  EXPECT_EQ(to_float16(2049.0f).bits, to_float16(2048.0f).bits);  // tie to even
  EXPECT_EQ(to_float16(2051.0f).bits, to_float16(2052.0f).bits);  // tie to even (up)
}

TEST(Half, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(to_bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(to_float(bfloat16{0x3f80}), 1.0f);
  EXPECT_EQ(to_float(to_bfloat16(257.0f)), 256.0f);  // tie to even
  EXPECT_EQ(to_float(to_bfloat16(259.0f)), 260.0f);
  EXPECT_TRUE(std::isnan(to_float(to_bfloat16(std::nanf("")))));
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const bfloat16 h{static_cast<std::uint16_t>(b)};
    const float f = to_float(h);
    if (!std::isnan(f)) {
      EXPECT_EQ(to_bfloat16(f).bits, h.bits) << b;
    }
  }
}

TEST(Half, SmallIntegersAreExact) {
  for (int i = -2048; i <= 2048; ++i) EXPECT_EQ(to_float(to_float16(static_cast<float>(i))), i);
  for (int i = -256; i <= 256; ++i) EXPECT_EQ(to_float(to_bfloat16(static_cast<float>(i))), i);
}

}  // namespace
}  // namespace collbench
