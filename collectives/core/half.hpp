#pragma once
// 16-bit floating-point storage types with round-to-nearest-even conversions.
// Plain structs (not _Float16 / __half) so that host, device and every compiler agree on
// layout and rounding; arithmetic happens in float.
#include <cstdint>
#include <cstring>

#include "collectives/core/hd.hpp"

namespace collbench {

struct float16 {
  std::uint16_t bits;
};
struct bfloat16 {
  std::uint16_t bits;
};

namespace detail {
CB_HD_INLINE std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
CB_HD_INLINE float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace detail

// IEEE binary16 -> binary32, exact (F. Giesen's branch-light method, subnormals renormalised).
CB_HD_INLINE float to_float(float16 h) {
  const std::uint32_t shifted_exp = 0x7c00u << 13;
  std::uint32_t o = (static_cast<std::uint32_t>(h.bits) & 0x7fffu) << 13;
  const std::uint32_t exp = shifted_exp & o;
  o += (127u - 15u) << 23;
  if (exp == shifted_exp) {
    o += (128u - 16u) << 23;  // Inf / NaN
  } else if (exp == 0) {
    o += 1u << 23;  // zero / subnormal: renormalise
    o = detail::float_bits(detail::bits_float(o) - detail::bits_float(113u << 23));
  }
  return detail::bits_float(o | ((static_cast<std::uint32_t>(h.bits) & 0x8000u) << 16));
}

// binary32 -> binary16 with round-to-nearest-even; overflow gives Inf, NaN stays NaN.
CB_HD_INLINE float16 to_float16(float f) {
  std::uint32_t u = detail::float_bits(f);
  const std::uint32_t sign = u & 0x80000000u;
  u ^= sign;
  std::uint32_t o;
  if (u >= ((127u + 16u) << 23)) {
    o = (u > (255u << 23)) ? 0x7e00u : 0x7c00u;
  } else if (u < (113u << 23)) {
    const std::uint32_t magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    o = detail::float_bits(detail::bits_float(u) + detail::bits_float(magic)) - magic;
  } else {
    const std::uint32_t mant_odd = (u >> 13) & 1u;
    u += (static_cast<std::uint32_t>(15 - 127) << 23) + 0xfffu + mant_odd;
    o = u >> 13;
  }
  return float16{static_cast<std::uint16_t>(o | (sign >> 16))};
}

CB_HD_INLINE float to_float(bfloat16 b) {
  return detail::bits_float(static_cast<std::uint32_t>(b.bits) << 16);
}

// binary32 -> bfloat16 with round-to-nearest-even; NaN is kept quiet.
CB_HD_INLINE bfloat16 to_bfloat16(float f) {
  std::uint32_t u = detail::float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bfloat16{static_cast<std::uint16_t>((u >> 16) | 0x40u)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return bfloat16{static_cast<std::uint16_t>(u >> 16)};
}

}  // namespace collbench
