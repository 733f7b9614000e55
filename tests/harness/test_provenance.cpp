// Provenance (harness/runtime/provenance.cpp): the pure helpers, and this machine's own facts read
// through hwloc, /proc/cpuinfo and sched_getaffinity (real, no stand-ins).
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include "harness/runtime/provenance.hpp"

namespace collbench {
namespace {

TEST(Provenance, CpuListText) {
  EXPECT_EQ(int_ranges_text({}), "");
  EXPECT_EQ(int_ranges_text({3}), "3");
  EXPECT_EQ(int_ranges_text({0, 1, 2, 3, 8}), "0-3,8");
  EXPECT_EQ(int_ranges_text({8, 2, 1, 1, 0, 10, 9}), "0-2,8-10");
}

TEST(Provenance, CpuModelFromCpuinfo) {
  EXPECT_EQ(cpu_model_of("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel name\t: Intel(R) Xeon(R) "
                         "Processor  \ncpu MHz\t\t: 2300.000\n"),
            "Intel(R) Xeon(R) Processor");
  EXPECT_EQ(cpu_model_of("processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\n"), "POWER9 (raw), altivec supported");
  EXPECT_EQ(cpu_model_of("processor\t: 0\nBogoMIPS\t: 50.00\n"), "");
}

TEST(Provenance, LoadavgFromProcText) {
  const auto l = loadavg_of("6.12 11.50 0.40 3/412 8894\n");
  ASSERT_TRUE(l.has_value());
  EXPECT_DOUBLE_EQ((*l)[0], 6.12);
  EXPECT_DOUBLE_EQ((*l)[1], 11.5);
  EXPECT_DOUBLE_EQ((*l)[2], 0.4);
  EXPECT_FALSE(loadavg_of("").has_value());
  EXPECT_FALSE(loadavg_of("0.52 0.61\n").has_value()) << "two numbers are not a load average";
  EXPECT_FALSE(loadavg_of("0.52 -1 0.40 1/2 3").has_value());
  EXPECT_FALSE(loadavg_of("0.52 nan 0.40 1/2 3").has_value());
  EXPECT_FALSE(loadavg_of("busy").has_value());
}

TEST(Provenance, ThisMachinesLoadAndCpus) {
  // What the run and end records write: the kernel's numbers, as /proc/loadavg and sysconf say.
  EXPECT_EQ(online_cpus(), static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_GE(online_cpus(), 1);
  const auto l = local_loadavg();
  ASSERT_TRUE(l.has_value()) << "/proc/loadavg unreadable";
  for (double v : *l) EXPECT_GE(v, 0.0);
}

TEST(Provenance, ThisMachineThroughHwloc) {
  NodeHardware hw;
  RankBinding b;
  local_provenance(hw, b);
  ASSERT_EQ(hw.error, "");
  EXPECT_FALSE(hw.hwloc.empty());
  EXPECT_GE(hw.packages, 1);
  EXPECT_GE(hw.numa_nodes, 1);
  EXPECT_GE(hw.cores, 1);
  EXPECT_GE(hw.pus, hw.cores);
  EXPECT_GE(hw.pus, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  ASSERT_FALSE(hw.caches.empty());
  EXPECT_EQ(hw.caches.front().level, 1);
  for (const auto& c : hw.caches) {
    EXPECT_GT(c.size_bytes, 0u);
    EXPECT_GE(c.count, 1);
  }
  // The binding is this process's affinity, as the kernel says it.
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  EXPECT_EQ(b.cpus, int_ranges_text(cpus));
  EXPECT_FALSE(b.numa.empty());
}

}  // namespace
}  // namespace collbench
