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

// IEEE binary16 -> binary32, exact (F. Giesen's method, subnormals renormalised).
// Branch-free (every case computed, then selected) so that a loop over it vectorises:
// the host reduce kernels of float16 run at float32-like speed. Same results as the
// branchy form for all 2^16 inputs, NaN payloads included.
CB_HD_INLINE float to_float(float16 h) {
#if defined(__CUDA_ARCH__)
  // The GPU converts in one instruction: the form below is ALU-bound there (H200: the float16
  // reduce kernel at 0.70 of memcpy, bfloat16 at 1.00). Exact either way.
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
  return f;
#else
  const std::uint32_t shifted_exp = 0x7c00u << 13;
  const std::uint32_t m = (static_cast<std::uint32_t>(h.bits) & 0x7fffu) << 13;
  const std::uint32_t exp = shifted_exp & m;
  const std::uint32_t o = m + ((127u - 15u) << 23);
  const std::uint32_t inf_nan = o + ((128u - 16u) << 23);
  // Zero / subnormal: renormalise through a float subtraction (exact).
  const std::uint32_t sub = detail::float_bits(detail::bits_float(o + (1u << 23)) - detail::bits_float(113u << 23));
  const std::uint32_t r = exp == shifted_exp ? inf_nan : (exp == 0 ? sub : o);
  return detail::bits_float(r | ((static_cast<std::uint32_t>(h.bits) & 0x8000u) << 16));
#endif
}

// binary32 -> binary16 with round-to-nearest-even; overflow gives Inf, NaN stays NaN
// (0x7e00). Branch-free like to_float above.
CB_HD_INLINE float16 to_float16(float f) {
#if defined(__CUDA_ARCH__)
  // One instruction on the GPU (round to nearest even, overflow to Inf, as below); its NaN
  // (0x7fff) is made the host's 0x7e00 with the sign kept.
  std::uint16_t r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return float16{static_cast<std::uint16_t>(f != f ? 0x7e00u | (detail::float_bits(f) >> 16 & 0x8000u) : r)};
#else
  const std::uint32_t x = detail::float_bits(f);
  const std::uint32_t sign = x & 0x80000000u;
  const std::uint32_t u = x ^ sign;
  const std::uint32_t big = (u > (255u << 23)) ? 0x7e00u : 0x7c00u;
  const std::uint32_t magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  const std::uint32_t small = detail::float_bits(detail::bits_float(u) + detail::bits_float(magic)) - magic;
  const std::uint32_t mant_odd = (u >> 13) & 1u;
  const std::uint32_t normal = (u + (static_cast<std::uint32_t>(15 - 127) << 23) + 0xfffu + mant_odd) >> 13;
  const std::uint32_t o = u >= ((127u + 16u) << 23) ? big : (u < (113u << 23) ? small : normal);
  return float16{static_cast<std::uint16_t>(o | (sign >> 16))};
#endif
}

CB_HD_INLINE float to_float(bfloat16 b) {
  return detail::bits_float(static_cast<std::uint32_t>(b.bits) << 16);
}

// binary32 -> bfloat16 with round-to-nearest-even; NaN is kept quiet. Branch-free (the
// NaN case selected, not branched to) so that loops over it vectorise.
CB_HD_INLINE bfloat16 to_bfloat16(float f) {
  const std::uint32_t u = detail::float_bits(f);
  const std::uint32_t quiet_nan = (u >> 16) | 0x40u;
  const std::uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  // f != f: NaN (one vector compare; the integer form |u| > 0x7f800000 takes three).
  const std::uint32_t r = f != f ? quiet_nan : rounded;
  return bfloat16{static_cast<std::uint16_t>(r)};
}

}  // namespace collbench
