// The memory check's arithmetic (harness/runtime/memcheck.*): host and device needs of a point.
#include <gtest/gtest.h>

#include "harness/runtime/memcheck.hpp"

namespace collbench {
namespace {

constexpr std::uint64_t MiB = 1ull << 20;

TEST(Memcheck, DevicePointCountsBuffersScratchStagingAndVerification) {
  // allreduce of 16 MiB float32 on 2 ranks: send 16 + recv 16 + scratch 16 on the GPU.
  const auto staged = device_point_memory_need(Op::allreduce, 4 * MiB, DType::float32, 2, true);
  const auto direct = device_point_memory_need(Op::allreduce, 4 * MiB, DType::float32, 2, false);
  EXPECT_EQ(staged.device, direct.device);
  EXPECT_GE(staged.device, 48 * MiB);
  EXPECT_LE(staged.device, 48 * MiB + 64 * MiB);
  // Staged MPI holds a pinned send and receive of the largest buffer (powers of two) on the host.
  EXPECT_EQ(staged.host - direct.host, 2 * 16 * MiB);
  // A 5 MiB buffer is staged in 8 MiB pool buffers.
  const auto odd = device_point_memory_need(Op::broadcast, 5 * MiB, DType::uint8, 2, true);
  const auto odd_direct = device_point_memory_need(Op::broadcast, 5 * MiB, DType::uint8, 2, false);
  EXPECT_EQ(odd.host - odd_direct.host, 2 * 8 * MiB);
  // The device buffers are not counted on the host: far below the CPU path's need.
  EXPECT_LT(direct.host, point_memory_need(Op::allreduce, 64 * MiB, DType::float32, 2).total());
}

TEST(Memcheck, DeviceShortfallCountsTheRanksSharingTheGpu) {
  EXPECT_FALSE(device_memory_shortfall(100 * MiB, 1, 150 * MiB));
  const auto why = device_memory_shortfall(100 * MiB, 2, 150 * MiB);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why,
            "not enough device memory: 2 rank(s) on one GPU need 100 MiB each (200 MiB) but the GPU has 150 MiB free");
  EXPECT_FALSE(device_memory_shortfall(100 * MiB, 2, 0)) << "unknown free memory passes";
}

// --interleave with a hot cache gives every algorithm its own send + recv: the need counts them.
TEST(Memcheck, InterleavedHotPointsHoldASetPerAlgorithm) {
  Settings s;
  EXPECT_EQ(buffer_copies(s, 3), 1u) << "one after the other: one set";
  s.interleave = true;
  EXPECT_EQ(buffer_copies(s, 3), 3u);
  EXPECT_EQ(buffer_copies(s, 1), 1u);
  s.cache_cold = true;
  EXPECT_EQ(buffer_copies(s, 3), 1u) << "cold: one pool, which no call finds warm anyway";
  const auto one = point_memory_need(Op::allreduce, 4 * MiB, DType::float32, 2);
  const auto three = point_memory_need(Op::allreduce, 4 * MiB, DType::float32, 2, 0, 3);
  EXPECT_EQ(one.buffers, 32 * MiB);
  EXPECT_EQ(three.buffers, 3 * 32 * MiB);
  EXPECT_EQ(three.extra, one.extra) << "the algorithms share one scratch";
  const auto dev = device_point_memory_need(Op::allreduce, 4 * MiB, DType::float32, 2, false);
  const auto dev3 = device_point_memory_need(Op::allreduce, 4 * MiB, DType::float32, 2, false, 3);
  EXPECT_EQ(dev3.device - dev.device, 2 * 32 * MiB);
  EXPECT_EQ(dev3.host, dev.host);
}

TEST(Memcheck, HostShortfall) {
  EXPECT_FALSE(memory_shortfall(10 * MiB, 4, 40 * MiB));
  EXPECT_TRUE(memory_shortfall(10 * MiB, 4, 39 * MiB));
  EXPECT_FALSE(memory_shortfall(10 * MiB, 4, 0));
}

}  // namespace
}  // namespace collbench
