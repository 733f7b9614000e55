// stream_copy (core/stream_copy.hpp): byte-exact for every alignment of dst and src and every
// length around the 64-byte lines it streams (the head up to dst's first line boundary, whole
// lines, the tail), beyond both ends nothing written; a no-op in place and for 0 bytes.
#include "collectives/core/stream_copy.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace collbench {
namespace {

std::byte pattern(std::size_t i) { return static_cast<std::byte>((i * 131 + 7) & 0xff); }

TEST(StreamCopy, ExactAtEveryAlignmentAndLength) {
  constexpr std::size_t kGuard = 64, kMax = 3 * 64 + 17;
  std::vector<std::byte> src(kMax + 2 * kGuard), dst(kMax + 2 * kGuard + 64);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = pattern(i);
  for (std::size_t d_off = 0; d_off < 64; d_off += 7)
    for (std::size_t s_off = 0; s_off < 64; s_off += 13)
      for (std::size_t n = 0; n <= kMax; ++n) {
        std::fill(dst.begin(), dst.end(), std::byte{0xee});
        stream_copy(dst.data() + kGuard + d_off, src.data() + s_off, n);
        for (std::size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= kGuard + d_off && i < kGuard + d_off + n;
          const std::byte want = inside ? pattern(i - kGuard - d_off + s_off) : std::byte{0xee};
          ASSERT_EQ(dst[i], want) << "dst offset " << d_off << " src offset " << s_off << " length " << n
                                  << " byte " << i;
        }
      }
}

TEST(StreamCopy, LargerThanTheCachesAndInPlace) {
  const std::size_t n = (std::size_t{8} << 20) + 5;
  std::vector<std::byte> src(n), dst(n + 2, std::byte{0});
  for (std::size_t i = 0; i < n; ++i) src[i] = pattern(i);
  const std::vector<std::byte> want = src;
  stream_copy(dst.data() + 1, src.data(), n);
  EXPECT_EQ(std::memcmp(dst.data() + 1, src.data(), n), 0);
  EXPECT_EQ(dst[0], std::byte{0});
  EXPECT_EQ(dst[n + 1], std::byte{0});
  stream_copy(src.data(), src.data(), n);  // in place: nothing to do
  stream_copy(nullptr, nullptr, 0);
  EXPECT_TRUE(src == want);
}

}  // namespace
}  // namespace collbench
