// How the device reduce kernels walk their arrays (collectives/gpu/reduce_plan.hpp), without a
// GPU: misaligned chunks that share their misalignment still get 16-byte packs.
#include <gtest/gtest.h>

#include <cstddef>

#include "collectives/gpu/reduce_plan.hpp"

namespace collbench {
namespace {

alignas(256) std::byte g_mem[3][1024];

TEST(ReducePlan, AlignedPointersPackFromTheStart) {
  const gpu::ReducePlan p = gpu::plan_reduce(g_mem[0], g_mem[1], g_mem[2], 100, 4);
  EXPECT_TRUE(p.vector);
  EXPECT_EQ(p.head, 0u);
}

TEST(ReducePlan, SharedMisalignmentPacksAfterAHead) {
  // A chunk at element 1 of three float32 buffers (offset 4 bytes): 3 elements, then packs.
  const gpu::ReducePlan f = gpu::plan_reduce(g_mem[0] + 4, g_mem[1] + 4, g_mem[2] + 4, 1000, 4);
  EXPECT_TRUE(f.vector);
  EXPECT_EQ(f.head, 3u);
  // bfloat16 at element 3 (offset 6): 5 elements of head.
  const gpu::ReducePlan h = gpu::plan_reduce(g_mem[0] + 6, g_mem[1] + 6, g_mem[2] + 6, 1000, 2);
  EXPECT_TRUE(h.vector);
  EXPECT_EQ(h.head, 5u);
  // int8 at offset 15: one element, then 16-byte packs.
  EXPECT_EQ(gpu::plan_reduce(g_mem[0] + 15, g_mem[1] + 15, g_mem[2] + 15, 64, 1).head, 1u);
}

TEST(ReducePlan, DifferentMisalignmentsGoOneElementPerThread) {
  EXPECT_FALSE(gpu::plan_reduce(g_mem[0], g_mem[1] + 4, g_mem[2], 1000, 4).vector);
  EXPECT_FALSE(gpu::plan_reduce(g_mem[0] + 4, g_mem[1] + 4, g_mem[2] + 8, 1000, 4).vector);
  // Too short to reach an aligned pack.
  EXPECT_FALSE(gpu::plan_reduce(g_mem[0] + 4, g_mem[1] + 4, g_mem[2] + 4, 3, 4).vector);
}

}  // namespace
}  // namespace collbench
