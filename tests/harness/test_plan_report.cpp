// --dry-run's time estimate: the timing engine's shape at an assumed cost per call.
#include <gtest/gtest.h>

#include "harness/report/plan_report.hpp"

namespace collbench {
namespace {

TEST(DryRunEstimate, APointIsAtLeastItsWarmUpAndGrowsWithItsCalls) {
  Settings s;
  EXPECT_GE(point_seconds(s, 1, 8), 0.005) << "the warm-up's 5 ms floor";
  EXPECT_LT(point_seconds(s, 1, 8), 0.01);
  const double small = point_seconds(s, 10, 1024), big = point_seconds(s, 10000, 1 << 24);
  EXPECT_GT(big, 20 * 3 * 10000e-6) << "20 samples of a 10 ms call, each in its start window";
  EXPECT_GT(big, small);
  s.min_time_s = 1;  // adaptive: 1 s of samples, unless --max-iters comes first
  EXPECT_LT(point_seconds(s, 10, 1024), 0.1) << "1000 samples of 35 us";
  s.max_iters = 1'000'000;
  EXPECT_GE(point_seconds(s, 10, 1024), 1.0);
  s.batch = true;
  s.min_time_s = 0;
  EXPECT_LT(point_seconds(s, 10000, 1 << 24), big) << "a batch runs back to back, no start windows";
}

TEST(DryRunEstimate, AssumedCallCost) {
  EXPECT_DOUBLE_EQ(assumed_call_us(Op::allreduce, 0, 2), kAssumedStepUs);
  EXPECT_DOUBLE_EQ(assumed_call_us(Op::allreduce, 0, 8), 3 * kAssumedStepUs);
  // 2 ranks: allreduce's bus bytes are (2(n-1)/n) x 1 = the bytes; 2 MB at 2 GB/s = 1000 us.
  EXPECT_NEAR(assumed_call_us(Op::allreduce, 2'000'000, 2), kAssumedStepUs + 1000, 1e-9);
}

TEST(DryRunEstimate, APlanAddsItsPointsToTheSetup) {
  CollectiveBlock one;
  one.algos = {nullptr};
  one.redop = RedOp::sum;
  CollectiveBlock three = one;
  three.algos = {nullptr, nullptr, nullptr};
  const double t1 = estimated_seconds({one}, 2), t3 = estimated_seconds({three}, 2);
  EXPECT_GT(t1, kRunSetupS);
  EXPECT_NEAR(t3 - kRunSetupS, 3 * (t1 - kRunSetupS), 1e-9);
  EXPECT_DOUBLE_EQ(estimated_seconds({}, 2), kRunSetupS);
}

}  // namespace
}  // namespace collbench
