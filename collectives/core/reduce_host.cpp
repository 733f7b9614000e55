// Host reduce kernels: the roofline of every reducing algorithm. One plain loop per
// (dtype, op) that GCC vectorises; target_clones adds an AVX2 version chosen at load time
// (ifunc), so one binary runs everywhere and uses 256-bit vectors where the CPU has them.
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "collectives/core/reduce_op.hpp"

namespace collbench {
namespace {

// `out` may be `a` or `b` (accumulate in place) but never overlaps them otherwise, so each
// case gets its own loop with restrict pointers: the vectoriser then needs no run-time
// overlap check and no scalar fallback loop (GCC versions the loop on such a check without
// them). Operand order is kept in every case.
template <class T, RedOp Op>
inline void reduce_distinct(T* __restrict o, const T* __restrict x, const T* __restrict y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) o[i] = apply<T, Op>(x[i], y[i]);
}
template <class T, RedOp Op>
inline void reduce_into_a(T* __restrict o, const T* __restrict y, std::size_t n) {  // out == a
  for (std::size_t i = 0; i < n; ++i) o[i] = apply<T, Op>(o[i], y[i]);
}
template <class T, RedOp Op>
inline void reduce_into_b(T* __restrict o, const T* __restrict x, std::size_t n) {  // out == b
  for (std::size_t i = 0; i < n; ++i) o[i] = apply<T, Op>(x[i], o[i]);
}

template <class T, RedOp Op>
inline void reduce_loop(void* out, const void* a, const void* b, std::size_t n) {
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  if (o == x && o == y) {
    for (std::size_t i = 0; i < n; ++i) o[i] = apply<T, Op>(o[i], o[i]);
  } else if (o == x) {
    reduce_into_a<T, Op>(o, y, n);
  } else if (o == y) {
    reduce_into_b<T, Op>(o, x, n);
  } else {
    reduce_distinct<T, Op>(o, x, y, n);
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define CB_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CB_TARGET_CLONES
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
// float16 with F16C: vcvtph2ps widens 8 halves exactly, vcvtps2ph (round to nearest even)
// narrows them as to_float16 does, overflow to Inf and subnormals included. The one case
// that differs is NaN: to_float16 makes every NaN 0x7e00 | sign, vcvtps2ph keeps the
// payload, so NaN lanes are rewritten. max/min select the original bits, as Arith does.
// Chosen at run time when the CPU has AVX2 + F16C; otherwise the portable loop runs.
#define CB_HAVE_F16C_PATH 1
template <RedOp Op>
__attribute__((target("avx2,f16c"))) void f16c_loop(void* out, const void* a, const void* b, std::size_t n) {
  auto* o = static_cast<float16*>(out);
  const auto* x = static_cast<const float16*>(a);
  const auto* y = static_cast<const float16*>(b);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i hx = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    const __m128i hy = _mm_loadu_si128(reinterpret_cast<const __m128i*>(y + i));
    const __m256 fx = _mm256_cvtph_ps(hx), fy = _mm256_cvtph_ps(hy);
    __m128i h;
    if constexpr (Op == RedOp::sum || Op == RedOp::prod) {
      const __m256 r = Op == RedOp::sum ? _mm256_add_ps(fx, fy) : _mm256_mul_ps(fx, fy);
      h = _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7c00));
      const __m128i canonical = _mm_or_si128(_mm_and_si128(h, _mm_set1_epi16(static_cast<short>(0x8000))),
                                             _mm_set1_epi16(0x7e00));
      h = _mm_blendv_epi8(h, canonical, nan);
    } else {
      // max: x < y ? y : x;  min: y < x ? y : x  (ordered compares: a NaN keeps x).
      const __m256 m = Op == RedOp::max ? _mm256_cmp_ps(fx, fy, _CMP_LT_OQ) : _mm256_cmp_ps(fy, fx, _CMP_LT_OQ);
      const __m256i mi = _mm256_castps_si256(m);
      const __m128i m16 = _mm_packs_epi32(_mm256_castsi256_si128(mi), _mm256_extracti128_si256(mi, 1));
      h = _mm_blendv_epi8(hx, hy, m16);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i), h);
  }
  for (; i < n; ++i) o[i] = apply<float16, Op>(x[i], y[i]);
}

bool cpu_has_f16c() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return has;
}
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
#ifdef CB_HAVE_F16C_PATH
// float16: F16C where the CPU has it (checked once), else the portable clones.
#define CB_F16_KERNEL(OP)                                                              \
  CB_KERNEL(float16, f16_portable, OP)                                                 \
  void f16_##OP(void* o, const void* a, const void* b, std::size_t n) {               \
    if (cpu_has_f16c()) f16c_loop<RedOp::OP>(o, a, b, n);                              \
    else f16_portable_##OP(o, a, b, n);                                                \
  }
CB_F16_KERNEL(sum)
CB_F16_KERNEL(prod)
CB_F16_KERNEL(max)
CB_F16_KERNEL(min)
#else
CB_KERNELS(float16, f16)
#endif
CB_KERNELS(bfloat16, bf16)
CB_KERNELS(float, f32)
CB_KERNELS(double, f64)

}  // namespace

#define CB_ROW(NAME) {NAME##_sum, NAME##_prod, NAME##_max, NAME##_min}
const ReduceFn detail::kHostReduceTable[8][4] = {CB_ROW(i8),  CB_ROW(u8),   CB_ROW(i32), CB_ROW(i64),
                                                 CB_ROW(f16), CB_ROW(bf16), CB_ROW(f32), CB_ROW(f64)};

std::optional<RedOp> parse_redop(std::string_view name) {
  for (RedOp op : kAllRedOps)
    if (name == redop_name(op)) return op;
  return std::nullopt;
}

std::string redop_names() { return "sum, prod, max, min, avg"; }

}  // namespace collbench
