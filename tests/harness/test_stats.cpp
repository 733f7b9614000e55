// Statistics (percentiles exactly as documented) and the bandwidth model.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "harness/measure/bandwidth.hpp"
#include "harness/measure/measure.hpp"
#include "harness/measure/stats.hpp"

namespace collbench {
namespace {

TEST(Percentile, LinearInterpolationBetweenClosestRanks) {
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};  // sorted
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 0), 1);
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 100), 10);
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 50), 5.5);  // h = 4.5
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 5), 1.45);  // h = 0.45
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 95), 9.55);
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 99), 9.91);
  const std::vector<double> one = {42};
  EXPECT_DOUBLE_EQ(percentile_sorted(one, 5), 42);
  EXPECT_DOUBLE_EQ(percentile_sorted(one, 99), 42);
}

TEST(Summarize, KnownSamplesInAnyOrder) {
  const std::vector<double> x = {10, 2, 8, 4, 6};  // sorted: 2 4 6 8 10
  const Stats s = summarize(x);
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.mean, 6);
  EXPECT_DOUBLE_EQ(s.p50, 6);
  EXPECT_DOUBLE_EQ(s.p5, 2.4);    // h = 0.2
  EXPECT_DOUBLE_EQ(s.p95, 9.6);   // h = 3.8
  EXPECT_DOUBLE_EQ(s.p99, 9.92);  // h = 3.96
  EXPECT_DOUBLE_EQ(s.stdev, std::sqrt(10.0));  // sum of squares 40 over N-1 = 4
}

TEST(Summarize, OneSampleAndNone) {
  const std::vector<double> one = {3.5};
  const Stats s = summarize(one);
  EXPECT_DOUBLE_EQ(s.min, 3.5);
  EXPECT_DOUBLE_EQ(s.p99, 3.5);
  EXPECT_DOUBLE_EQ(s.stdev, 0);
  EXPECT_EQ(summarize({}).samples, 0);
}

TEST(RelativeCi95, ShrinksWithSamplesAndIsInfiniteWhenUnknown) {
  EXPECT_TRUE(std::isinf(relative_ci95(std::vector<double>{1.0})));
  const std::vector<double> flat(10, 5.0);
  EXPECT_DOUBLE_EQ(relative_ci95(flat), 0);
  const std::vector<double> x = {9, 11, 9, 11};  // mean 10, stdev sqrt(4/3)
  EXPECT_NEAR(relative_ci95(x), 1.96 * std::sqrt(4.0 / 3) / 2 / 10, 1e-12);
}

TEST(KeepGoing, AdaptiveStopsOnTimeNoiseAndCap) {
  TimingSpec spec;
  std::vector<Timing> t(1);
  t[0].samples_us = std::vector<double>(20, 100.0);  // 2 ms spent, no noise
  EXPECT_FALSE(keep_going(t, spec, 20, 1000, 1)) << "not adaptive: one round";
  spec.adaptive = true;
  spec.min_time_s = 0.001;
  EXPECT_FALSE(keep_going(t, spec, 20, 1000, 1));
  spec.min_time_s = 0.01;
  EXPECT_TRUE(keep_going(t, spec, 20, 1000, 1)) << "needs 10 ms";
  EXPECT_FALSE(keep_going(t, spec, 20, 20, 1)) << "cap reached";
  EXPECT_FALSE(keep_going(t, spec, 20, 1000, 10)) << "batches of 10 ops: 20 ms spent";
  EXPECT_FALSE(keep_going(t, spec, 20, 1000, 1, 0.01)) << "10 ms of wall time each (clock-started windows)";
  EXPECT_TRUE(keep_going(t, spec, 20, 1000, 1, 0.005)) << "op time 2 ms, wall 5 ms: neither is 10 ms";
  spec.min_time_s = 0;
  spec.max_noise = 0.01;
  t[0].samples_us = {50, 150, 50, 150};
  EXPECT_TRUE(keep_going(t, spec, 4, 1000, 1)) << "noisy";
}

TEST(Bandwidth, AlgbwInGBps) {
  EXPECT_DOUBLE_EQ(algbw_GBps(1'000'000, 1000), 1.0);  // 1 MB in 1 ms = 1 GB/s
  EXPECT_DOUBLE_EQ(algbw_GBps(1 << 20, 1), 1048.576);
  EXPECT_DOUBLE_EQ(algbw_GBps(8, 0), 0);
  EXPECT_DOUBLE_EQ(algbw_GBps(0, 5), 0);
}

TEST(Bandwidth, BusbwFactorsOfNcclTests) {
  for (int n : {1, 2, 3, 4, 8, 64}) {
    const double nd = n;
    EXPECT_DOUBLE_EQ(busbw_factor(Op::allreduce, n), 2 * (nd - 1) / nd) << n;
    for (Op op : {Op::allgather, Op::reduce_scatter, Op::alltoall, Op::gather, Op::scatter})
      EXPECT_DOUBLE_EQ(busbw_factor(op, n), (nd - 1) / nd) << op_name(op) << n;
    EXPECT_DOUBLE_EQ(busbw_factor(Op::broadcast, n), 1.0);
    EXPECT_DOUBLE_EQ(busbw_factor(Op::reduce, n), 1.0);
  }
  EXPECT_DOUBLE_EQ(busbw_GBps(Op::allreduce, 4, 2.0), 3.0);
}

}  // namespace
}  // namespace collbench
