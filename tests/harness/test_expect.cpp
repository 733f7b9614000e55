// --expect FILE: the expectation file's parser (every refusal names FILE:LINE), the check of a
// point against the entries naming it, and the gate's table and failure line.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "collectives/core/error.hpp"
#include "harness/plan/expect.hpp"
#include "harness/report/gate.hpp"
#include "harness/results/result.hpp"

namespace collbench {
namespace {

// Line numbers below count from 1.
const std::string kFile = R"(schema: collbench-expect/1
tolerance: 10%
entries:
  - {op: allreduce, algo: ring, layout: 1x4, bytes: 1M, min_busbw_GBps: 2.0}
  - {op: allreduce, algo: any, layout: any, min_bytes: 8, max_bytes: 1K, max_time_us: 20, tolerance: 0.5}
  - {op: allreduce, algo: library, layout: [3, 1], min_bytes: 0, dtype: float32, in_place: false, min_busbw_GBps: 1}
  - {op: pingpong, algo: latency, bytes: 8, max_time_us: 1}
  - {op: broadcast, algo: ring, bytes: 64K, min_busbw_GBps: 1}
)";

TunedLayout even(int nodes, int per) { return {std::vector<int>(static_cast<std::size_t>(nodes), per)}; }

PointResult point(const char* op, const char* algo, std::uint64_t bytes, double p50, double busbw) {
  PointResult r;
  r.op = op;
  r.algo = algo;
  r.dtype = "float32";
  r.bytes = bytes;
  Stats s;
  s.p50 = p50;
  r.time_us = s;
  r.busbw_GBps = busbw;
  return r;
}

TEST(Expect, ParsesEntriesWithDefaultsAndLines) {
  const Expectations x = Expectations::parse(kFile, "e.yaml");
  ASSERT_EQ(x.entries().size(), 5u);
  const ExpectEntry& a = x.entries()[0];
  EXPECT_EQ(a.line, 4);
  EXPECT_EQ(a.op, "allreduce");
  EXPECT_EQ(a.algo, "ring");
  ASSERT_TRUE(a.layout);
  EXPECT_EQ(*a.layout, even(1, 4));
  EXPECT_EQ(a.min_bytes, 1u << 20);
  EXPECT_EQ(a.max_bytes, std::optional<std::uint64_t>(1u << 20));
  EXPECT_DOUBLE_EQ(*a.min_busbw_GBps, 2.0);
  EXPECT_DOUBLE_EQ(a.tolerance, 0.10);  // the file's default
  const ExpectEntry& b = x.entries()[1];
  EXPECT_FALSE(b.layout);
  EXPECT_DOUBLE_EQ(b.tolerance, 0.5);
  EXPECT_EQ(b.max_bytes, std::optional<std::uint64_t>(1024));
  EXPECT_DOUBLE_EQ(*b.max_time_us, 20);
  EXPECT_EQ(x.entries()[2].layout->ranks_per_node, (std::vector<int>{3, 1}));
  EXPECT_FALSE(x.entries()[2].max_bytes);
  EXPECT_EQ(x.entries()[2].in_place, std::optional<bool>(false));
}

TEST(Expect, ChecksEveryEntryNamingAPointWithItsTolerance) {
  const Expectations x = Expectations::parse(kFile, "e.yaml");
  // 1 MiB ring at 1x4: entry 1 only (entry 2 stops at 1K). Limit 2.0 x 0.9 = 1.8.
  auto v = check_expectations(x, point("allreduce", "ring", 1 << 20, 100, 1.85), even(1, 4));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].entry->line, 4);
  EXPECT_EQ(v[0].metric, "busbw_GBps");
  EXPECT_DOUBLE_EQ(v[0].limit, 1.8);
  EXPECT_TRUE(v[0].pass);
  EXPECT_FALSE(check_expectations(x, point("allreduce", "ring", 1 << 20, 100, 1.75), even(1, 4))[0].pass);
  // Another layout: not named.
  EXPECT_TRUE(check_expectations(x, point("allreduce", "ring", 1 << 20, 100, 1.0), even(2, 2)).empty());
  // 8 B: entry 2 (any algo, any layout); time limit 20 x 1.5 = 30 us.
  v = check_expectations(x, point("allreduce", "tree", 8, 29.9, 0), even(2, 2));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].metric, "time_us");
  EXPECT_DOUBLE_EQ(v[0].limit, 30);
  EXPECT_TRUE(v[0].pass);
  EXPECT_FALSE(check_expectations(x, point("allreduce", "tree", 8, 30.1, 0), even(2, 2))[0].pass);
  // Uneven [3, 1], dtype and placement: entry 3 names only out-of-place float32.
  PointResult lib = point("allreduce", "library", 1 << 20, 100, 5);
  EXPECT_EQ(check_expectations(x, lib, {{3, 1}}).size(), 1u);
  lib.in_place = true;
  EXPECT_TRUE(check_expectations(x, lib, {{3, 1}}).empty());
  lib.in_place = false;
  lib.dtype = "float64";
  EXPECT_TRUE(check_expectations(x, lib, {{3, 1}}).empty());
  // A skipped point named by an entry fails it, with no measured value.
  PointResult skipped = point("broadcast", "ring", 65536, 0, 0);
  skipped.skipped = true;
  skipped.time_us.reset();
  skipped.busbw_GBps.reset();
  v = check_expectations(x, skipped, even(1, 2));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_FALSE(v[0].measured);
  EXPECT_FALSE(v[0].pass);
  // Pingpong points are named by method.
  PointResult pp = point("pingpong", "latency", 8, 0.5, 0.016);
  EXPECT_TRUE(check_expectations(x, pp, even(1, 3)).at(0).pass);
}

// Each malformed file is refused with its file:line and the reason.
struct Bad {
  const char* text;
  const char* where;  // "e.yaml:LINE"
  const char* why;
};

TEST(Expect, RefusesMalformedFilesNamingFileAndLine) {
  const Bad cases[] = {
      {"entries: [\n  - {op: allreduce\n", "e.yaml:2", "not YAML"},
      {"- 1\n- 2\n", "e.yaml:1", "not a mapping"},
      {"schema: collbench-expect/1\n", "e.yaml:1", "no 'entries'"},
      {"entries: []\n", "e.yaml:1", "entries is not a non-empty list"},
      {"entries:\n  - {op: allreduce, algo: ring, bytes: 8, max_time_us: 1}\nextra: 1\n", "e.yaml:3",
       "unknown key 'extra'"},
      {"entries:\n  - op: allreduce\n    algo: ring\n    bytes: 8\n    max_time_us: 1\n    colour: red\n", "e.yaml:6",
       "unknown key 'colour'"},
      {"entries:\n  - {op: allreduc, algo: ring, bytes: 8, max_time_us: 1}\n", "e.yaml:2", "unknown op 'allreduc'"},
      {"entries:\n  - {op: allreduce, algo: rign, bytes: 8, max_time_us: 1}\n", "e.yaml:2", "unknown algo 'rign'"},
      {"entries:\n  - {op: pingpong, algo: ring, bytes: 8, max_time_us: 1}\n", "e.yaml:2", "unknown algo 'ring'"},
      {"entries:\n  - {op: allreduce, algo: ring, bytes: 8, max_time_us: -1}\n", "e.yaml:2", "negative"},
      {"entries:\n  - {op: allreduce, algo: ring, bytes: 8, min_busbw_GBps: fast}\n", "e.yaml:2", "is not a number"},
      {"entries:\n  - {op: allreduce, algo: ring, bytes: 8}\n", "e.yaml:2", "exactly one of"},
      {"entries:\n  - {op: allreduce, algo: ring, bytes: 8, max_time_us: 1, min_busbw_GBps: 1}\n", "e.yaml:2",
       "exactly one of"},
      {"entries:\n  - {op: allreduce, algo: ring, bytes: -8, max_time_us: 1}\n", "e.yaml:2", "bytes '-8'"},
      {"entries:\n  - {op: allreduce, algo: ring, min_bytes: 2K, max_bytes: 1K, max_time_us: 1}\n", "e.yaml:2",
       "max_bytes is below min_bytes"},
      {"entries:\n  - {op: allreduce, algo: ring, bytes: 8, min_bytes: 8, max_time_us: 1}\n", "e.yaml:2",
       "cannot be combined"},
      {"entries:\n  - {op: allreduce, algo: ring, layout: 2by2, bytes: 8, max_time_us: 1}\n", "e.yaml:2",
       "layout '2by2'"},
      {"entries:\n  - {op: allreduce, algo: ring, layout: 4x0, bytes: 8, max_time_us: 1}\n", "e.yaml:2", "no ranks"},
      {"entries:\n  - {op: allreduce, algo: ring, bytes: 8, max_time_us: 1, tolerance: 150%}\n", "e.yaml:2",
       "not below 100%"},
      {"tolerance: -5%\nentries:\n  - {op: allreduce, algo: ring, bytes: 8, max_time_us: 1}\n", "e.yaml:1", "negative"},
      {"entries:\n  - {op: allreduce, algo: ring, bytes: 8, max_time_us: 1, in_place: maybe}\n", "e.yaml:2",
       "not true or false"},
      {"entries:\n  - {op: allreduce, algo: ring, bytes: 8, max_time_us: 1, dtype: float33}\n", "e.yaml:2",
       "unknown dtype"},
      {"entries:\n  - {op: [allreduce], algo: ring, bytes: 8, max_time_us: 1}\n", "e.yaml:2", "not a single value"},
      {"entries:\n  - {algo: ring, bytes: 8, max_time_us: 1}\n", "e.yaml:2", "without 'op'"},
      {"entries:\n  - {? [op]: allreduce, algo: ring, bytes: 8, max_time_us: 1}\n", "e.yaml:2", "unknown key '(not a name)'"},
      {"schema: collbench-tuning/1\nentries:\n  - {op: allreduce, algo: ring, bytes: 8, max_time_us: 1}\n", "e.yaml:1",
       "is not collbench-expect/1"},
  };
  for (const Bad& c : cases) {
    try {
      Expectations::parse(c.text, "e.yaml");
      ADD_FAILURE() << "accepted:\n" << c.text;
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::string("expectation file ") + c.where + ": "), std::string::npos) << what;
      EXPECT_NE(what.find(c.why), std::string::npos) << what;
      EXPECT_NE(what.find("; accepted: "), std::string::npos) << what;
    }
  }
}

TEST(Expect, MissingFileIsAUsageError) {
  EXPECT_THROW(Expectations::load("/nonexistent/expect.yaml"), UsageError);
}

TEST(Gate, TableNamesEveryCheckAndTheFailuresLine) {
  const Expectations x = Expectations::parse(kFile, "e.yaml");
  Gate g(x, even(1, 4));
  g.add(point("allreduce", "ring", 1 << 20, 100, 1.85));  // pass (entry 1)
  g.add(point("allreduce", "ring", 8, 45, 0));            // FAIL (entry 2: limit 30 us)
  EXPECT_EQ(g.checked(), 2);
  EXPECT_EQ(g.failed(), 1);
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  g.print(f);
  std::fclose(f);
  const std::string s(buf, len);
  std::free(buf);
  EXPECT_NE(s.find("acceptance (--expect e.yaml): 2 checks, 1 below the reference"), std::string::npos) << s;
  EXPECT_NE(s.find("allreduce/ring 1x4 float32 1048576B"), std::string::npos) << s;
  EXPECT_NE(s.find("pass"), std::string::npos) << s;
  EXPECT_NE(s.find("FAIL"), std::string::npos) << s;
  EXPECT_NE(s.find("e.yaml:5"), std::string::npos) << s;
  EXPECT_NE(s.find("named no point of this run (not checked): e.yaml:6, e.yaml:7, e.yaml:8"), std::string::npos) << s;
  EXPECT_EQ(g.failures(), "allreduce/ring 1x4 float32 8B p50 45 > 30 us");
}

}  // namespace
}  // namespace collbench
