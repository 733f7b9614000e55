#include "collectives/core/stream_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace collbench {
namespace {

#if defined(__x86_64__)
// `lines` whole 64-byte lines from s to the 64-byte aligned d.
__attribute__((target("avx2"))) void stream_lines_avx2(std::byte* d, const std::byte* s, std::size_t lines) {
  for (std::size_t i = 0; i < lines; ++i, d += 64, s += 64) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d), lo);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 32), hi);
  }
}

void stream_lines_sse2(std::byte* d, const std::byte* s, std::size_t lines) {
  for (std::size_t i = 0; i < lines; ++i, d += 64, s += 64) {
    __m128i v[4];
    for (int k = 0; k < 4; ++k) v[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16 * k));
    for (int k = 0; k < 4; ++k) _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16 * k), v[k]);
  }
}

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

}  // namespace

void stream_copy(void* dst, const void* src, std::size_t bytes) noexcept {
  if (dst == src || bytes == 0) return;
#if defined(__x86_64__)
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  // Up to dst's first line boundary, then whole lines, then the rest of the last line.
  const std::size_t head = std::min(bytes, (64 - reinterpret_cast<std::uintptr_t>(d) % 64) % 64);
  const std::size_t lines = (bytes - head) / 64, tail = head + lines * 64;
  std::memcpy(d, s, head);
  if (cpu_has_avx2())
    stream_lines_avx2(d + head, s + head, lines);
  else
    stream_lines_sse2(d + head, s + head, lines);
  std::memcpy(d + tail, s + tail, bytes - tail);
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
#endif
}

}  // namespace collbench
