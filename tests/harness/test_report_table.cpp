// The human table: algorithms side by side, wrapped to the width, skips listed under the
// table, nccl-tests' footer lines.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "harness/report/report_table.hpp"

namespace collbench {
namespace {

const AlgoEntry kA{Op::allreduce, "ring", "any", "", ""};
const AlgoEntry kB{Op::allreduce, "tree", "any", "", ""};
const AlgoEntry kC{Op::allreduce, "library", "mpi", "", ""};

PointResult point(const char* algo, std::uint64_t bytes, double p50) {
  PointResult r;
  r.op = "allreduce";
  r.algo = algo;
  r.dtype = "float32";
  r.redop = "sum";
  r.bytes = bytes;
  r.count = bytes / 4;
  r.world_size = 4;
  Stats s;
  s.p50 = p50;
  r.time_us = s;
  r.algbw_GBps = bytes / p50 / 1e3;
  r.busbw_GBps = *r.algbw_GBps * 1.5;
  r.checked = true;
  return r;
}

PointResult skipped(const char* algo, std::uint64_t bytes) {
  PointResult r = point(algo, bytes, 1);
  r.time_us.reset();
  r.algbw_GBps.reset();
  r.busbw_GBps.reset();
  r.checked = false;
  r.skipped = true;
  r.skip_reason = "needs a power of two";
  return r;
}

std::string render(int width) {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  CollectiveBlock cb;
  cb.algos = {&kA, &kB, &kC};
  cb.redop = RedOp::sum;
  const Block b = cb;
  RunRecord run;
  run.run_id = "0123456789abcdef";
  run.topology = topology_from({0, 0, 2, 2}, {"n1", "n1", "n2", "n2"}, 0);
  run.versions = {"0.1.0", "abc", {{"mpi", std::string("Open MPI")}}};
  run.backend = "mpi";
  run.links = LinkRates{LinkRate{5.5, 0, 1, 1 << 20}, LinkRate{1.25, 0, 2, 1 << 20}};
  NodeHardware hw;
  hw.cpu_model = "Test CPU";
  hw.packages = hw.numa_nodes = 2;
  hw.cores = 16;
  hw.pus = 32;
  run.provenance = Provenance{{}, {hw, hw}};
  run.device = "cpu";
  TableReport t(f, width);
  t.header(run);
  t.begin_block(b);
  PointResult efficient = point("library", 8, 12);
  efficient.efficiency = 0.724;
  t.add_row({point("ring", 8, 10), skipped("tree", 8), efficient});
  PointResult bad = point("library", 1024, 20);
  bad.wrong = 3;
  t.add_row({point("ring", 1024, 15), skipped("tree", 1024), bad});
  t.end_block();
  t.footer();
  std::fclose(f);
  std::string s(buf, len);
  std::free(buf);
  return s;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(Table, HeaderRowsSkipsAndFooter) {
  const std::string s = render(200);
  EXPECT_NE(s.find("world 4 ranks: 2 nodes x 2 ranks per node"), std::string::npos) << s;
  EXPECT_NE(s.find("node 1  n2"), std::string::npos) << s;
  EXPECT_NE(s.find("# allreduce  float32  sum  out-of-place"), std::string::npos) << s;
  EXPECT_EQ(count(s, "#wrong"), 3) << "three algorithms side by side in one table:\n" << s;
  EXPECT_EQ(count(s, "skip "), 2 + 1) << s;  // two cells, one reason line
  EXPECT_NE(s.find("#  skip tree (2 sizes, 8..1024 B): needs a power of two"), std::string::npos) << s;
  EXPECT_NE(s.find("# Out of bounds values : 3 FAILED"), std::string::npos) << s;
  EXPECT_NE(s.find("# Avg bus bandwidth"), std::string::npos) << s;
  EXPECT_EQ(count(s, " eff "), 3) << "an efficiency column per algorithm:\n" << s;
  EXPECT_NE(s.find("12.00    0.00    0.00    72      0"), std::string::npos) << "efficiency 0.724 as a percentage:\n" << s;
  EXPECT_NE(s.find("# links: intra 5.50 GB/s (ranks 0-1), inter 1.25 GB/s (ranks 0-2), osu_bw 1024 KiB"), std::string::npos)
      << s;
  EXPECT_NE(s.find("# hardware node 1: Test CPU; 2 packages, 2 NUMA nodes, 16 cores, 32 PUs"), std::string::npos) << s;
  EXPECT_NE(s.find("# Points               : 6 (4 measured, 2 skipped, 1 with wrong results)"), std::string::npos) << s;
}

TEST(Table, WrapsAlgorithmsToTheWidth) {
  EXPECT_EQ(TableReport::algos_per_table(80), 1);
  EXPECT_EQ(TableReport::algos_per_table(132), 2);
  EXPECT_EQ(TableReport::algos_per_table(200), 3);
  EXPECT_EQ(TableReport::algos_per_table(250), 4);
  const std::string s = render(90);
  EXPECT_EQ(count(s, "(us)"), 3) << "one table per algorithm at 90 columns:\n" << s;
  for (std::size_t start = 0, end; (end = s.find('\n', start)) != std::string::npos; start = end + 1)
    EXPECT_LE(end - start, 90u) << s.substr(start, end - start);
}

}  // namespace
}  // namespace collbench
