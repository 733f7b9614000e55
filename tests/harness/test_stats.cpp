// Statistics (percentiles exactly as documented) and the bandwidth model.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "harness/results/bandwidth.hpp"
#include "harness/measure/measure.hpp"
#include "harness/results/stats.hpp"

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

// The links' share (efficiency): nodes as the ranks of the nccl-tests argument.
TEST(Bandwidth, InterNodeFactors) {
  for (int nodes : {2, 3, 4}) {
    const double off = (nodes - 1.0) / nodes;
    EXPECT_DOUBLE_EQ(inter_node_factor(Op::allreduce, nodes, 4), 2 * off);
    for (Op op : {Op::allgather, Op::reduce_scatter, Op::gather, Op::scatter})
      EXPECT_DOUBLE_EQ(inter_node_factor(op, nodes, 4), off) << op_name(op);
    EXPECT_DOUBLE_EQ(inter_node_factor(Op::broadcast, nodes, 4), 1.0);
    EXPECT_DOUBLE_EQ(inter_node_factor(Op::reduce, nodes, 4), 1.0);
    EXPECT_DOUBLE_EQ(inter_node_factor(Op::alltoall, nodes, 4), 4 * off);
    // One rank per node: the per-rank busbw factor of the whole world.
    for (Op op : kAllOps) EXPECT_DOUBLE_EQ(inter_node_factor(op, nodes, 1), busbw_factor(op, nodes)) << op_name(op);
  }
  for (Op op : kAllOps) EXPECT_DOUBLE_EQ(inter_node_factor(op, 1, 8), 0.0);
}

TEST(Bandwidth, LinkBoundTime) {
  const LinkRates one_node{LinkRate{10, 0, 1, 1 << 20}, std::nullopt};
  // 1 node x 4: allreduce moves 2(n-1)/n x S per rank at the intra rate: 1.5 x 1e9 B / 10 GB/s.
  EXPECT_DOUBLE_EQ(*link_bound_s(Op::allreduce, 1'000'000'000, 4, 1, 4, one_node), 0.15);
  EXPECT_DOUBLE_EQ(*link_bound_s(Op::broadcast, 1'000'000'000, 4, 1, 4, one_node), 0.1);
  // Nothing moves on one rank; a needed rate that was not measured gives no bound.
  EXPECT_FALSE(link_bound_s(Op::allreduce, 1'000'000'000, 1, 1, 1, LinkRates{}));
  EXPECT_FALSE(link_bound_s(Op::allreduce, 1'000'000'000, 4, 2, 2, one_node));
  // 2 nodes x 2 at intra 10, inter 1 GB/s: the node's link carries 2(N-1)/N x S = S (1 s),
  // more than a rank's port at the fastest rate (1.5 x S / 10 GB/s = 0.15 s).
  const LinkRates two{LinkRate{10, 0, 1, 1 << 20}, LinkRate{1, 0, 2, 1 << 20}};
  EXPECT_DOUBLE_EQ(*link_bound_s(Op::allreduce, 1'000'000'000, 4, 2, 2, two), 1.0);
  // alltoall: each node sends p(N-1)/N = 1 x S across.
  EXPECT_DOUBLE_EQ(*link_bound_s(Op::alltoall, 1'000'000'000, 4, 2, 2, two), 1.0);
  // A faster inter link than intra: the per-rank term uses the fastest rate.
  const LinkRates odd{LinkRate{1, 0, 1, 1 << 20}, LinkRate{100, 0, 2, 1 << 20}};
  EXPECT_DOUBLE_EQ(*link_bound_s(Op::allreduce, 1'000'000'000, 4, 2, 2, odd), 0.015);
  // One rank per node: only the inter link.
  const LinkRates inter_only{std::nullopt, LinkRate{2, 0, 1, 1 << 20}};
  EXPECT_DOUBLE_EQ(*link_bound_s(Op::allgather, 1'000'000'000, 2, 2, 1, inter_only), 0.25);
}

}  // namespace
}  // namespace collbench
