// parse_size (a fuzz target too), the sweep's size list and its n-chunk rounding.
#include <gtest/gtest.h>

#include "collectives/core/error.hpp"
#include "harness/plan/sizes.hpp"

namespace collbench {
namespace {

TEST(ParseSize, AcceptsBytesAndBinarySuffixes) {
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("64K"), 64u << 10);
  EXPECT_EQ(parse_size("64k"), 64u << 10);
  EXPECT_EQ(parse_size("16M"), 16u << 20);
  EXPECT_EQ(parse_size("1G"), 1ull << 30);
  EXPECT_EQ(parse_size("2T"), 2ull << 40);
  EXPECT_EQ(parse_size("1KiB"), 1024u);
  EXPECT_EQ(parse_size("1KB"), 1024u);
  EXPECT_EQ(parse_size("3MiB"), 3u << 20);
  EXPECT_EQ(parse_size("5GiB"), 5ull << 30);
  EXPECT_EQ(parse_size("100B"), 100u);
  EXPECT_EQ(parse_size("007"), 7u);
}

TEST(ParseSize, AcceptsFractionsThatAreWholeBytes) {
  EXPECT_EQ(parse_size("1.5M"), 1572864u);
  EXPECT_EQ(parse_size("0.5K"), 512u);
  EXPECT_EQ(parse_size("2.0"), 2u);
  EXPECT_EQ(parse_size("0.25KiB"), 256u);
}

TEST(ParseSize, MaxValueAndOverflow) {
  EXPECT_EQ(parse_size("18446744073709551615"), 18446744073709551615ull);
  EXPECT_THROW(parse_size("18446744073709551616"), UsageError);
  EXPECT_EQ(parse_size("16777215T"), 16777215ull << 40);
  EXPECT_THROW(parse_size("16777216T"), UsageError);
  EXPECT_THROW(parse_size("99999999999999999999G"), UsageError);
  EXPECT_THROW(parse_size("999999999999999999999999999999999999999999"), UsageError);
}

TEST(ParseSize, RefusesGarbage) {
  for (const char* bad : {"", "-1", "-0", "+1", "0x10", "1Q", "1.5", "0.1K", "1.", ".5K", "1..5K", "K", "1 K", " 1",
                          "1K ", "1KK", "1Ki", "1iB", "1e3", "nan", "1.0000000001G", "1,5M", "16MiBs"}) {
    EXPECT_THROW(parse_size(bad), UsageError) << "'" << bad << "'";
  }
}

TEST(ParseSize, MessageSaysWhatAndWhatIsAccepted) {
  try {
    parse_size("1Q");
    FAIL();
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'1Q'"), std::string::npos) << m;
    EXPECT_NE(m.find("unknown suffix"), std::string::npos) << m;
    EXPECT_NE(m.find("; accepted: "), std::string::npos) << m;
  }
}

TEST(FormatSize, ExactUnitsOnly) {
  EXPECT_EQ(format_size(8), "8");
  EXPECT_EQ(format_size(1024), "1K");
  EXPECT_EQ(format_size(1536), "1536");
  EXPECT_EQ(format_size(16u << 20), "16M");
  EXPECT_EQ(format_size(1ull << 30), "1G");
}

using V = std::vector<std::uint64_t>;

TEST(SizeSteps, GeometricInclusiveOfMax) {
  EXPECT_EQ(size_steps(8, 64, 2, 0), (V{8, 16, 32, 64}));
  EXPECT_EQ(size_steps(8, 100, 2, 0), (V{8, 16, 32, 64, 100}));
  EXPECT_EQ(size_steps(1, 1000, 10, 0), (V{1, 10, 100, 1000}));
  EXPECT_EQ(size_steps(5, 5, 2, 0), (V{5}));
  EXPECT_EQ(size_steps(0, 4, 2, 0), (V{0, 1, 2, 4}));
  EXPECT_TRUE(size_steps(9, 8, 2, 0).empty());
}

TEST(SizeSteps, LinearInclusiveOfMax) {
  EXPECT_EQ(size_steps(0, 4096, 2, 1024), (V{0, 1024, 2048, 3072, 4096}));
  EXPECT_EQ(size_steps(100, 350, 2, 100), (V{100, 200, 300, 350}));
}

TEST(SizeSteps, NoOverflowNearTheTop) {
  const std::uint64_t top = ~0ull;
  const V g = size_steps(1ull << 62, top, 2, 0);
  EXPECT_EQ(g, (V{1ull << 62, 1ull << 63, top}));
  const V l = size_steps(top - 10, top, 2, 8);
  EXPECT_EQ(l, (V{top - 10, top - 2, top}));
}

TEST(SizeChunks, NChunkOps) {
  EXPECT_EQ(size_chunks(Op::allreduce, 4), 1);
  EXPECT_EQ(size_chunks(Op::broadcast, 4), 1);
  EXPECT_EQ(size_chunks(Op::reduce, 4), 1);
  for (Op op : {Op::gather, Op::allgather, Op::scatter, Op::reduce_scatter, Op::alltoall})
    EXPECT_EQ(size_chunks(op, 4), 4) << op_name(op);
}

TEST(SizePoints, RoundsDownToWholeElementsPerChunk) {
  // allgather on 3 ranks, float32: granule 12 bytes; 8 B is below it: one element per chunk.
  const auto p = size_points({8, 16, 32, 64, 100}, 3, 4);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].bytes, 12u) << "8 B rounds up to one element per chunk, not down to 0";
  EXPECT_EQ(p[0].chunk_count, 1u);
  EXPECT_EQ(p[0].total_count, 3u);
  EXPECT_EQ(p[1].bytes, 24u);
  EXPECT_EQ(p[2].bytes, 60u);
  EXPECT_EQ(p[2].chunk_count, 5u);
  EXPECT_EQ(p[3].bytes, 96u);
  EXPECT_EQ(p[3].total_count, 24u);
}

TEST(SizePoints, DeduplicatesRepeatsAfterRounding) {
  // float64 on one chunk: 1..15 bytes all give 8; 16 is 16.
  const auto p = size_points({1, 2, 4, 8, 12, 16}, 1, 8);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].bytes, 8u);
  EXPECT_EQ(p[0].chunk_count, 1u);
  EXPECT_EQ(p[1].bytes, 16u);
}

TEST(SizePoints, ZeroBytesOnlyWhenAskedFor) {
  // -b 1 -e 6 of float32 (issue 33): 1, 2, 4, 6 -> one 4-byte point, no 0-byte one.
  const auto small = size_points(size_steps(1, 6, 2, 0), 1, 4);
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[0].bytes, 4u);
  // -b 0 asks for it: 0, then 1 -> 4, 2 -> 4 ...
  const auto zero = size_points(size_steps(0, 8, 2, 0), 1, 4);
  ASSERT_EQ(zero.size(), 3u);
  EXPECT_EQ(zero[0].bytes, 0u);
  EXPECT_EQ(zero[1].bytes, 4u);
  EXPECT_EQ(zero[2].bytes, 8u);
}

TEST(SizePoints, SingleChunkCountIsBytesOverElement) {
  const auto p = size_points({1 << 20}, 1, 4);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].chunk_count, 262144u);
  EXPECT_EQ(p[0].total_count, 262144u);
}

}  // namespace
}  // namespace collbench
