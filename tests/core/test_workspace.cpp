#include "collectives/core/workspace.hpp"

#include <gtest/gtest.h>

#include "collectives/core/error.hpp"

namespace collbench {
namespace {

TEST(Workspace, ScratchIsReusedAcrossCalls) {
  HostMemory m;
  Workspace ws(m);
  void* a = ws.get(1000);
  EXPECT_EQ(ws.get(500), a);
  void* b = ws.get(100, 1);
  EXPECT_NE(a, b);
  EXPECT_EQ(ws.bytes_held(), 2 * 4096u);
  EXPECT_THROW(ws.get(1, Workspace::kSlots), Error);
}

TEST(Workspace, LargeRequestsAreNotRoundedUp) {
  HostMemory m;
  Workspace ws(m);
  ws.get((64u << 20) + 1);
  EXPECT_EQ(ws.bytes_held(), (64u << 20) + 1);
}

}  // namespace
}  // namespace collbench
