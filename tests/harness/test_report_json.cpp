// JSON Lines records: every contract field present with the right type; skipped -> nulls;
// the writer appends, truncates only on request, and leaves no empty file it created.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "collectives/core/error.hpp"
#include "harness/report/report_json.hpp"

namespace collbench {
namespace {

using nlohmann::ordered_json;

PointResult measured() {
  PointResult r;
  r.op = "allreduce";
  r.algo = "ring";
  r.backend = "mpi";
  r.device = "cpu";
  r.dtype = "float32";
  r.redop = "sum";
  r.bytes = 1048576;
  r.count = 262144;
  r.world_size = 4;
  r.nodes = 2;
  r.ranks_per_node = 2;
  r.iters = 20;
  r.warmup = 5;
  r.time_us = Stats{1, 2, 3, 4, 5, 6, 7, 0.5, 20};
  r.algbw_GBps = 0.3;
  r.busbw_GBps = 0.45;
  r.checked = true;
  return r;
}

void expect_type(const ordered_json& j, const char* key, ordered_json::value_t t) {
  ASSERT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j[key].type(), t) << key << " = " << j[key].dump();
}

bool is_number(const ordered_json& v) { return v.is_number(); }

TEST(ResultJson, EveryContractFieldWithItsType) {
  const ordered_json j = result_json(measured(), "0123456789abcdef");
  using T = ordered_json::value_t;
  for (const char* k : {"type", "schema", "run_id", "op", "algo", "backend", "device", "dtype", "redop", "mode"})
    expect_type(j, k, T::string);
  EXPECT_EQ(j["type"], "result");
  EXPECT_EQ(j["schema"], "collbench/1");
  EXPECT_EQ(j["mode"], "per_iter");
  EXPECT_TRUE(j["root"].is_null());
  for (const char* k : {"in_place", "skipped", "checked"}) expect_type(j, k, T::boolean);
  for (const char* k : {"bytes", "count", "world_size", "nodes", "ranks_per_node", "iters", "warmup", "wrong"})
    EXPECT_TRUE(j[k].is_number_integer()) << k;
  EXPECT_TRUE(is_number(j["algbw_GBps"]));
  EXPECT_TRUE(is_number(j["busbw_GBps"]));
  ASSERT_TRUE(j["time_us"].is_object());
  for (const char* k : {"min", "p5", "p50", "mean", "p95", "p99", "max", "stdev"})
    EXPECT_TRUE(j["time_us"][k].is_number()) << k;
  EXPECT_DOUBLE_EQ(j["time_us"]["p50"].get<double>(), 3);
  EXPECT_TRUE(j["skip_reason"].is_null());
  EXPECT_EQ(j.begin().key(), "type") << "records start with their type";
}

TEST(ResultJson, SkippedPointHasNullMeasurements) {
  PointResult r = measured();
  r.time_us.reset();
  r.algbw_GBps.reset();
  r.busbw_GBps.reset();
  r.checked = false;
  r.skipped = true;
  r.skip_reason = "world size not a power of two";
  r.redop.reset();
  r.root = 0;
  const ordered_json j = result_json(r, "x");
  EXPECT_TRUE(j["time_us"].is_null());
  EXPECT_TRUE(j["algbw_GBps"].is_null());
  EXPECT_TRUE(j["busbw_GBps"].is_null());
  EXPECT_TRUE(j["redop"].is_null());
  EXPECT_EQ(j["root"], 0);
  EXPECT_EQ(j["skipped"], true);
  EXPECT_EQ(j["skip_reason"], "world size not a power of two");
  EXPECT_EQ(j["wrong"], 0);
}

TEST(ResultJson, SamplesOnlyUpToTheLimitRoundedToANanosecond) {
  PointResult r = measured();
  r.samples_us = {3.00049, 1.0, 2.5};
  EXPECT_FALSE(result_json(r, "x").contains("samples_us")) << "off unless asked (keep_samples 0)";
  EXPECT_FALSE(result_json(r, "x", 2).contains("samples_us")) << "more samples than the limit";
  const ordered_json j = result_json(r, "x", 3);
  ASSERT_TRUE(j["samples_us"].is_array());
  ASSERT_EQ(j["samples_us"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["samples_us"][0].get<double>(), 3.0) << "measurement order kept, rounded to 1 ns";
  EXPECT_DOUBLE_EQ(j["samples_us"][2].get<double>(), 2.5);
  r.time_us.reset();
  r.skipped = true;
  EXPECT_FALSE(result_json(r, "x", 1000).contains("samples_us")) << "a skipped point has no samples";
}

TEST(RunJson, EveryContractField) {
  RunConfig cfg;
  cfg.cases.push_back({{Op::allreduce}, {}, Settings{}, "command line"});
  RunRecord run;
  run.run_id = "0123456789abcdef";
  run.argv = {"collbench", "--op", "allreduce"};
  run.start_time = "2026-01-01T00:00:00Z";
  run.topology = topology_from({0, 0, 2, 2}, {"a", "a", "b", "b"}, 0);
  run.backend = "mpi";
  run.device = "cpu";
  run.versions = {"0.1.0", "abc1234", "Open MPI v4.1.4"};
  run.config = &cfg;
  const ordered_json j = run_json(run);
  EXPECT_EQ(j["type"], "run");
  EXPECT_EQ(j["schema"], "collbench/1");
  EXPECT_EQ(j["argv"].size(), 3u);
  EXPECT_EQ(j["hosts"], ordered_json::parse(R"(["a","b"])"));
  EXPECT_EQ(j["node_of_rank"], ordered_json::parse("[0,0,1,1]"));
  EXPECT_EQ(j["world_size"], 4);
  EXPECT_EQ(j["nodes"], 2);
  EXPECT_EQ(j["ranks_per_node"], 2);
  EXPECT_EQ(j["versions"]["collbench"], "0.1.0");
  EXPECT_EQ(j["versions"]["mpi"], "Open MPI v4.1.4");
  EXPECT_TRUE(j["versions"]["nccl"].is_null());
  EXPECT_TRUE(j["versions"]["cuda"].is_null());
  EXPECT_EQ(j["git_commit"], "abc1234");
  EXPECT_TRUE(j["slurm"].is_null());
  EXPECT_EQ(j["config"]["cases"][0]["ops"][0], "allreduce");
  EXPECT_EQ(j["config"]["cases"][0]["algos"], "all");
  EXPECT_EQ(j["config"]["cases"][0]["settings"]["max_bytes"], 16 << 20);
  run.slurm = std::map<std::string, std::string>{{"job_id", "42"}};
  EXPECT_EQ(run_json(run)["slurm"]["job_id"], "42");
}

TEST(EndJson, Fields) {
  const ordered_json j = end_json({"id", "2026-01-01T00:00:01Z", 1, 10, 2, 3});
  EXPECT_EQ(j["type"], "end");
  EXPECT_EQ(j["exit_status"], 1);
  EXPECT_EQ(j["points"], 10);
  EXPECT_EQ(j["wrong_points"], 2);
  EXPECT_EQ(j["skipped_points"], 3);
}

TEST(Helpers, RunIdAndTime) {
  const std::string id = random_run_id();
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  const std::string t = utc_now_iso8601();
  EXPECT_EQ(t.size(), 20u);
  EXPECT_EQ(t[10], 'T');
  EXPECT_EQ(t.back(), 'Z');
}

class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("collbench_writer_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static int lines(const std::filesystem::path& p) {
    std::ifstream in(p);
    int n = 0;
    for (std::string l; std::getline(in, l);) ++n;
    return n;
  }
  std::filesystem::path dir_;
};

TEST_F(WriterTest, AppendsByDefaultAndTruncatesOnRequest) {
  const auto p = dir_ / "r.jsonl";
  {
    JsonlWriter w(p.string(), false);
    w.write(ordered_json{{"type", "run"}});
  }
  {
    JsonlWriter w(p.string(), false);
    w.write(ordered_json{{"type", "run"}});
  }
  EXPECT_EQ(lines(p), 2);
  {
    JsonlWriter w(p.string(), true);
    w.write(ordered_json{{"type", "run"}});
  }
  EXPECT_EQ(lines(p), 1);
}

TEST_F(WriterTest, DiscardRemovesOnlyAnUnusedFileItCreated) {
  const auto p = dir_ / "new.jsonl";
  {
    JsonlWriter w(p.string(), false);
    w.discard_if_unused();
  }
  EXPECT_FALSE(std::filesystem::exists(p));
  { std::ofstream(p) << "{\"type\":\"run\"}\n"; }
  {
    JsonlWriter w(p.string(), false);
    w.discard_if_unused();
  }
  EXPECT_EQ(lines(p), 1) << "a file that existed before is never removed";
}

TEST_F(WriterTest, BadPathsAreUsageErrors) {
  EXPECT_THROW(JsonlWriter((dir_ / "missing" / "x.jsonl").string(), false), UsageError);
  EXPECT_THROW(JsonlWriter(dir_.string(), false), UsageError);
}

}  // namespace
}  // namespace collbench
