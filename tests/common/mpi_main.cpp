// main() of the MPI GoogleTest executables (linked by collbench_mpi_test; an executable that
// defines its own main, like the GPU device test, keeps it). Rank 0 prints the usual report;
// the other ranks print only their failures, so one failing rank is still seen, and the exit
// status is the worst over ranks.
//
// Skips are not passes: when nothing failed but some test was skipped on some rank, every rank
// exits with kSkipped (77, the ctests' SKIP_RETURN_CODE: tests/Collbench.cmake), so ctest shows
// "Skipped" and lists the test among those that did not run, and rank 0 names the skipped
// tests. Any skip counts, not only "all skipped": a check that could not be made (the clock
// start at more ranks than cores) beside others that passed is still a check not made. A test
// that does not apply at this world size at all (needs 2 ranks, run at 1) records the property
// kNotApplicable before its GTEST_SKIP and is not counted: that is the test plan, not a check
// lost to the machine.
#include <mpi.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace {

class FailuresOnly final : public ::testing::EmptyTestEventListener {
 public:
  explicit FailuresOnly(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "rank %d: %s:%d: %s\n", rank_, r.file_name() ? r.file_name() : "?", r.line_number(),
                   r.summary());
  }

 private:
  int rank_;
};

constexpr int kSkipped = 77;
constexpr const char* kNotApplicable = "not_applicable";

// "Suite.Name" of every test skipped on this rank for a reason other than kNotApplicable.
std::string counted_skips() {
  std::string names;
  const ::testing::UnitTest& u = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < u.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& s = *u.GetTestSuite(i);
    for (int j = 0; j < s.total_test_count(); ++j) {
      const ::testing::TestInfo& t = *s.GetTestInfo(j);
      const ::testing::TestResult& r = *t.result();
      if (!t.should_run() || !r.Skipped()) continue;
      bool applies = true;
      for (int k = 0; k < r.test_property_count(); ++k)
        if (std::string(r.GetTestProperty(k).key()) == kNotApplicable) applies = false;
      if (applies) names += std::string(names.empty() ? "" : ", ") + s.name() + "." + t.name();
    }
  }
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailuresOnly(rank));
  }
  const int rc = RUN_ALL_TESTS();
  const std::string skipped = counted_skips();
  int mine[2] = {rc, skipped.empty() ? 0 : 1}, worst[2] = {0, 0};
  MPI_Allreduce(mine, worst, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst[0] == 0 && worst[1] != 0) {
    if (!skipped.empty())
      std::fprintf(stderr, "rank %d: skipped (not a pass; exit %d): %s\n", rank, kSkipped, skipped.c_str());
    worst[0] = kSkipped;
  }
  MPI_Finalize();
  return worst[0];
}
