// FinalizeGuard (collectives/backends/mpi/finalize_guard.hpp): the expiry runs when the guarded
// call outlives the limit, and never when it returns in time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "collectives/backends/mpi/finalize_guard.hpp"

namespace collbench {
namespace {

using namespace std::chrono_literals;

TEST(FinalizeGuard, QuietWhenTheCallReturnsInTime) {
  std::atomic<int> fired{0};
  const auto t0 = std::chrono::steady_clock::now();
  {
    FinalizeGuard g(10s, [&] { ++fired; });
    std::this_thread::sleep_for(5ms);  // the call, returning
  }
  EXPECT_EQ(fired, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);  // the guard does not wait out its limit
}

TEST(FinalizeGuard, FiresWhileTheCallIsStillBlocked) {
  std::atomic<int> fired{0};
  {
    FinalizeGuard g(20ms, [&] { ++fired; });
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (fired == 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);  // "blocked"
    EXPECT_EQ(fired, 1);  // fired during the call, not at the guard's end
  }
  EXPECT_EQ(fired, 1);
}

}  // namespace
}  // namespace collbench
