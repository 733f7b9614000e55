// measure_size under real MPI ranks: skips (supports(), NotSupported at run time, in both the
// sequential and the interleaved paths), wrong-element counting summed over ranks, and the
// timing engine's invariants (same samples on every rank, max over ranks).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>

#include "collectives/transport/mpi/mpi_transport.hpp"
#include "harness/measure/bandwidth.hpp"
#include "harness/measure/collective_point.hpp"
#include "harness/run/control.hpp"
#include "harness/measure/measure.hpp"

namespace collbench {
namespace {

const AlgoEntry& library_allreduce() { return *Registry::get().find(Op::allreduce, "library", "mpi"); }

void run_library(Transport& t, const CollArgs& a) { library_allreduce().run(t, a); }

// Correct everywhere except element 0 on rank 1 (one wrong element over the world).
void run_off_by_one(Transport& t, const CollArgs& a) {
  run_library(t, a);
  if (t.rank() == 1 && a.count > 0) {
    float v;
    std::memcpy(&v, a.recv, sizeof v);
    v += 1;
    std::memcpy(a.recv, &v, sizeof v);
  }
}

void run_refusing(Transport&, const CollArgs&) { throw NotSupported("cannot do this here"); }

std::optional<std::string> needs_big_world(int n, const CollArgs&) {
  return n < 1000 ? std::optional<std::string>("needs 1000 ranks") : std::nullopt;
}

const AlgoEntry kWrong{Op::allreduce, "wrong", "any", "planted bug", "", &run_off_by_one};
const AlgoEntry kThrows{Op::allreduce, "throws", "any", "refuses at run time", "", &run_refusing};
const AlgoEntry kRefuses{Op::allreduce, "refuses", "any", "refuses up front", "", &run_library, &needs_big_world};

struct Fixture : ::testing::Test {
  Fixture() : transport(MPI_COMM_WORLD), control(MPI_COMM_WORLD) {
    topo = topology_from(std::vector<int>(static_cast<std::size_t>(control.size()), 0),
                         std::vector<std::string>(static_cast<std::size_t>(control.size()), "h"), control.rank());
  }
  CollectiveBlock block(bool interleave) {
    CollectiveBlock b;
    b.op = Op::allreduce;
    b.algos = {&library_allreduce(), &kWrong, &kThrows, &kRefuses};
    b.redop = RedOp::sum;
    b.settings.iters = 6;
    b.settings.warmup = 0;  // so "throws" refuses inside the timed loop, the harder path
    b.settings.interleave = interleave;
    return b;
  }
  std::vector<PointResult> measure(const CollectiveBlock& b, std::uint64_t count) {
    PointEnv env{transport, control, topo, "mpi", "cpu", true};
    return measure_size(env, b, SizePoint{count * 4, count, count});
  }
  MpiTransport transport;
  Control control;
  Topology topo;
};

void expect_outcomes(const std::vector<PointResult>& r, int n, TimingMode mode) {
  ASSERT_EQ(r.size(), 4u);
  EXPECT_FALSE(r[0].skipped);
  EXPECT_TRUE(r[0].checked);
  EXPECT_EQ(r[0].wrong, 0u);
  EXPECT_EQ(r[0].mode, mode);
  ASSERT_TRUE(r[0].time_us);
  EXPECT_EQ(r[0].time_us->samples, 6);
  EXPECT_EQ(r[0].iters, 6);
  EXPECT_DOUBLE_EQ(*r[0].busbw_GBps, *r[0].algbw_GBps * busbw_factor(Op::allreduce, n));
  EXPECT_FALSE(r[1].skipped);
  EXPECT_EQ(r[1].wrong, n > 1 ? 1u : 0u) << "wrong elements are summed over ranks";
  EXPECT_TRUE(r[2].skipped);
  EXPECT_EQ(r[2].skip_reason, "cannot do this here");
  EXPECT_FALSE(r[2].time_us);
  EXPECT_TRUE(r[3].skipped);
  EXPECT_EQ(r[3].skip_reason, "needs 1000 ranks");
}

TEST_F(Fixture, SequentialSkipsAndCountsWrong) {
  expect_outcomes(measure(block(false), 1000), control.size(), TimingMode::per_iter);
}

TEST_F(Fixture, InterleavedDropsARefusingAlgorithmAndGoesOn) {
  expect_outcomes(measure(block(true), 1000), control.size(), TimingMode::interleaved);
}

TEST_F(Fixture, CountZeroIsANormalPoint) {
  const auto r = measure(block(false), 0);
  EXPECT_FALSE(r[0].skipped);
  EXPECT_EQ(r[0].bytes, 0u);
  EXPECT_EQ(*r[0].algbw_GBps, 0.0);
}

TEST_F(Fixture, SamplesAreTheMaxOverRanksAndTheSameEverywhere) {
  // A workload where rank 0 sleeps 2 ms: every rank must see >= 2 ms in every sample.
  struct Sleepy : Workload {
    Sleepy(int rank) : Workload({"allreduce", "sleepy", 0, -1, ""}, "sleepy"), rank(rank) {}
    void run() override {
      if (rank == 0) {
        const double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.002) {
        }
      }
    }
    int rank;
  } w(control.rank());
  Workload* ws[] = {&w};
  TimingSpec spec;
  spec.iters = 4;
  const auto t = time_workloads(transport, control, ws, spec);
  ASSERT_EQ(t[0].samples_us.size(), 4u);
  for (double s : t[0].samples_us) EXPECT_GE(s, 2000.0);
  std::vector<double> mine = t[0].samples_us, root = mine;
  MPI_Bcast(root.data(), 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  EXPECT_EQ(mine, root);
}

TEST_F(Fixture, AdaptiveRoundsAgreeAcrossRanks) {
  struct Nop : Workload {
    Nop() : Workload({"allreduce", "nop", 0, -1, ""}, "nop") {}
    void run() override {}
  } w;
  Workload* ws[] = {&w};
  TimingSpec spec;
  spec.iters = 3;
  spec.adaptive = true;
  spec.min_time_s = 1.0;  // unreachable: the cap decides
  spec.max_iters = 24;
  const auto t = time_workloads(transport, control, ws, spec);
  EXPECT_EQ(t[0].ops, 24);  // rounds 3, 3, 6, 12
  spec.mode = TimingMode::batch;
  spec.iters = 4;
  const auto b = time_workloads(transport, control, ws, spec);
  EXPECT_EQ(b[0].ops, 24) << "6 batches of 4";
  EXPECT_EQ(b[0].samples_us.size(), 6u);
}

}  // namespace
}  // namespace collbench
