// The human table: one row per size with the algorithms (and placements) side by side, the
// form fitted to the width, the best column, markers, skips under the table, the footer.
#include <gtest/gtest.h>

#include <cctype>
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
  s.p5 = p50 * 0.95;
  s.p95 = p50 * 1.05;
  r.time_us = s;
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

RunRecord test_run(double link_spread = 0.02) {
  RunRecord run;
  run.run_id = "0123456789abcdef";
  run.topology = topology_from({0, 0, 2, 2}, {"n1", "n1", "n2", "n2"}, 0);
  run.versions = {"0.1.0", "abc", {{"mpi", std::string("Open MPI")}}};
  run.backend = "mpi";
  run.links = LinkRates{LinkRate{5.5, 0, 1, 1 << 20, 30, link_spread}, LinkRate{1.25, 0, 2, 1 << 20, 30, 0.01}};
  NodeHardware hw;
  hw.cpu_model = "Test CPU";
  hw.packages = hw.numa_nodes = 2;
  hw.cores = 16;
  hw.pus = 32;
  run.provenance = Provenance{{}, {hw, hw}};
  run.device = "cpu";
  return run;
}

// Captures what a TableReport prints.
class Capture {
 public:
  Capture() : f_(open_memstream(&buf_, &len_)) {}
  ~Capture() {
    if (f_) std::fclose(f_);
    std::free(buf_);
  }
  std::FILE* file() { return f_; }
  std::string text() {
    std::fflush(f_);
    return std::string(buf_, len_);
  }

 private:
  char* buf_ = nullptr;
  std::size_t len_ = 0;
  std::FILE* f_;
};

std::vector<Block> one_block(bool in_place = false) {
  CollectiveBlock cb;
  cb.algos = {&kA, &kB, &kC};
  cb.redop = RedOp::sum;
  cb.in_place = in_place;
  return {cb};
}

std::string render(int width, double link_spread = 0.02) {
  Capture c;
  TableReport t(c.file(), width);
  t.header(test_run(link_spread));
  const auto blocks = one_block();
  t.begin_table(blocks);
  PointResult efficient = point("library", 8, 12);
  efficient.efficiency = 0.724;
  t.add_row({point("ring", 8, 10), skipped("tree", 8), efficient});
  PointResult bad = point("library", 1024, 20);
  bad.wrong = 3;
  t.add_row({point("ring", 1024, 15), skipped("tree", 1024), bad});
  t.end_table();
  t.footer();
  return c.text();
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

std::string line_with(const std::string& s, const std::string& what) {
  const std::size_t p = s.find(what);
  if (p == std::string::npos) return "";
  const std::size_t b = s.rfind('\n', p) + 1, e = s.find('\n', p);
  return s.substr(b, e - b);
}

// The table's lines (rows, column headers, skips, the footer), not the run's facts above it;
// `rows_only`: the rows and column headers (the footer's prose fits 100 columns, not fewer).
void expect_width(const std::string& s, std::size_t width, bool rows_only = false) {
  for (std::size_t start = s.find("\n#\n"), end; (end = s.find('\n', start)) != std::string::npos; start = end + 1) {
    const auto prose = [&](std::size_t indent) {  // "# text" or the block's "#   how it was timed"
      return s.compare(start, indent, "#" + std::string(indent - 1, ' ')) == 0 &&
             std::isalpha(static_cast<unsigned char>(s[start + indent]));
    };
    if (rows_only && (prose(2) || prose(4))) continue;
    std::size_t cols = 0;  // display columns: UTF-8 continuation bytes take none
    for (std::size_t i = start; i < end; ++i) cols += (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
    EXPECT_LE(cols, width) << s.substr(start, end - start);
  }
}

TEST(Table, HeaderRowsSkipsAndFooter) {
  const std::string s = render(200);
  EXPECT_NE(s.find("world 4 ranks: 2 nodes x 2 ranks per node"), std::string::npos) << s;
  EXPECT_NE(s.find("node 1  n2"), std::string::npos) << s;
  EXPECT_NE(s.find("# allreduce  float32  sum  out-of-place"), std::string::npos) << s;
  EXPECT_EQ(count(s, "#wrong"), 3) << "three algorithms side by side in one table:\n" << s;
  EXPECT_EQ(count(s, "#       size"), 1) << "one table:\n" << s;
  EXPECT_EQ(count(s, "skip "), 2 + 1) << s;  // two cells, one reason line
  EXPECT_NE(s.find("#  skip tree (2 sizes, 8..1024 B): needs a power of two"), std::string::npos) << s;
  EXPECT_NE(s.find("# Out of bounds values : 3 FAILED"), std::string::npos) << s;
  EXPECT_EQ(count(s, " eff "), 3) << "an efficiency column per algorithm:\n" << s;
  EXPECT_NE(s.find("12.00      0.00    0.00    72      0"), std::string::npos) << "efficiency 0.724 as a percentage:\n" << s;
  EXPECT_NE(s.find("# links: intra 5.50 GB/s (ranks 0-1; p50 2 % slower), inter 1.25 GB/s (ranks 0-2; p50 1 % slower), "
                   "osu_bw 1024 KiB, fastest of 30"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("# hardware node 1: Test CPU; 2 packages, 2 NUMA nodes, 16 cores, 32 PUs"), std::string::npos) << s;
  EXPECT_NE(s.find("# Points               : 6 (4 measured, 2 skipped, 1 with wrong results)"), std::string::npos) << s;
  // The average per (op, algo), never over algorithms together.
  EXPECT_NE(s.find("# Avg bus bandwidth    : "), std::string::npos) << s;
  EXPECT_NE(line_with(s, "Avg bus bandwidth").find("allreduce/library"), std::string::npos) << s;
  EXPECT_NE(s.find("allreduce/ring (GB/s, mean over 2 points)"), std::string::npos) << s;
  expect_width(s, 200);
}

TEST(Table, BestColumnNamesTheWinnerAndTies) {
  const std::string s = render(200);
  // 8 B: ring 10 us (p95 10.5), library 12: ring by 20 %, beyond ring's spread.
  EXPECT_NE(line_with(s, "           8 ").find("ring +20%"), std::string::npos) << s;
  EXPECT_EQ(line_with(s, "           8 ").find("\u2248"), std::string::npos) << s;
  // 1024 B: ring 15 (p95 15.75), library 20: +33 %.
  EXPECT_NE(line_with(s, "        1024 ").find("ring +33%"), std::string::npos) << s;
  EXPECT_NE(s.find("# best                 : lowest p50"), std::string::npos) << s;

  Capture c;
  TableReport t(c.file(), 200);
  t.header(test_run());
  const auto blocks = one_block();
  t.begin_table(blocks);
  t.add_row({point("ring", 8, 10), point("tree", 8, 10.4), point("library", 8, 30)});  // 4 % < ring's p95 (+5 %)
  t.end_table();
  t.footer();
  EXPECT_NE(line_with(c.text(), "           8 ").find("\u2248 ring +4%"), std::string::npos) << c.text();
}

TEST(Table, FormFollowsTheWidth) {
  EXPECT_EQ(TableReport::form_for(200, 3, true), TableReport::Form::full);
  EXPECT_EQ(TableReport::form_for(132, 3, true), TableReport::Form::compact);
  EXPECT_EQ(TableReport::form_for(80, 3, true), TableReport::Form::compact);
  EXPECT_EQ(TableReport::form_for(60, 3, true), TableReport::Form::narrow);
  EXPECT_EQ(TableReport::form_for(132, 2, true), TableReport::Form::full);
  for (int width : {80, 100, 132, 200}) {
    const std::string s = render(width);
    EXPECT_EQ(count(s, "(us)"), 3) << "one table, three algorithms, at " << width << " columns:\n" << s;
    EXPECT_EQ(count(s, "#       size"), 1) << s;
    expect_width(s, static_cast<std::size_t>(width), width < 100);
  }
  EXPECT_EQ(render(132).find("algbw"), std::string::npos) << "compact: time and busbw only\n" << render(132);
}

TEST(Table, PlacementsSideBySideOnOneRow) {
  Capture c;
  TableReport t(c.file(), 400);
  t.header(test_run());
  std::vector<Block> blocks = one_block(false);
  blocks.push_back(one_block(true).front());
  t.begin_table(blocks);
  t.add_row({point("ring", 8, 10), point("tree", 8, 11), point("library", 8, 12)});
  EXPECT_EQ(c.text().find("\n           8 "), std::string::npos) << "the row waits for the in-place results";
  PointResult ip = point("ring", 8, 9);
  ip.in_place = true;
  t.add_row({ip, point("tree", 8, 11), point("library", 8, 12)});
  const std::string s = c.text();
  EXPECT_EQ(count(s, "\n           8 "), 1) << s;
  EXPECT_NE(s.find("out-of-place | in-place"), std::string::npos) << s;
  EXPECT_NE(line_with(s, "  out-of-place  ").find("in-place"), std::string::npos) << "a placement line:\n" << s;
  EXPECT_EQ(count(s, "#wrong"), 6) << s;
  EXPECT_EQ(count(line_with(s, "           8 "), "ring +10%"), 1) << s;
  EXPECT_EQ(count(line_with(s, "           8 "), "ring +22%"), 1) << s;
}

TEST(Table, MarksNoisyAndFallenBackPointsOnce) {
  Capture c;
  TableReport t(c.file(), 200);
  t.header(test_run());
  const auto blocks = one_block();
  t.begin_table(blocks);
  PointResult noisy = point("ring", 8, 122.44);
  noisy.time_us->p5 = 1.3;
  noisy.time_us->p95 = 247.87;
  PointResult fell = point("library", 8, 12);
  fell.sync_fallback = "most starts late in two passes in a row";
  PointResult planned = point("tree", 8, 12);  // a long op's barrier start is the plan, not a failure
  planned.sync_fallback = "op 215.7 us >= 100 x the barrier (0.50 us): barrier start";
  planned.sync_planned = true;
  t.add_row({noisy, planned, fell});
  t.end_table();
  t.footer();
  const std::string s = c.text();
  EXPECT_NE(s.find("122.44~ "), std::string::npos) << s;
  EXPECT_EQ(count(s, "12.00 ^"), 1) << "the failed clock start only:\n" << s;
  EXPECT_NE(s.find("(1 point; JSON sync_fallback)"), std::string::npos) << s;
  EXPECT_EQ(count(s, "# ~ after a time"), 1) << s;
  EXPECT_EQ(count(s, "# ^ after a time"), 1) << s;
}

TEST(Table, StoppedRunSaysSoAndKeepsAHalfDoneRow) {
  Capture c;
  TableReport t(c.file(), 300);
  t.header(test_run());
  std::vector<Block> blocks = one_block(false);
  blocks.push_back(one_block(true).front());
  t.begin_table(blocks);
  t.add_row({point("ring", 8, 10), point("tree", 8, 11), point("library", 8, 12)});
  t.footer(130);  // SIGINT before the in-place half of 8 B
  const std::string s = c.text();
  EXPECT_EQ(count(s, "\n           8 "), 1) << "the out-of-place half is printed:\n" << s;
  EXPECT_NE(s.find("# Run ended early      : stopped by SIGINT"), std::string::npos) << s;
  EXPECT_NE(s.find("exit status 130"), std::string::npos) << s;
}

TEST(Table, UncheckedResultsAreNotCalledOk) {
  Capture c;
  TableReport t(c.file(), 200);
  t.header(test_run());
  const auto blocks = one_block();
  t.begin_table(blocks);
  std::vector<PointResult> row{point("ring", 8, 10), point("tree", 8, 11), point("library", 8, 12)};
  for (auto& r : row) r.checked = false;
  t.add_row(row);
  t.end_table();
  t.footer();
  EXPECT_NE(c.text().find("# Out of bounds values : not checked (-c 0)"), std::string::npos) << c.text();
  EXPECT_EQ(c.text().find("OK"), std::string::npos) << c.text();
}

TEST(Table, EfficiencyOnlyWithASteadyCalibration) {
  const std::string s = render(200, 0.35);
  EXPECT_EQ(count(s, " eff "), 0) << s;
  EXPECT_NE(s.find("# eff: not shown: the link samples' p50 is 35 % over the fastest"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace collbench
