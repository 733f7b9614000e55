// JSON Lines records: every contract field present with the right type; skipped -> nulls;
// the writer appends, truncates only on request, and leaves no empty file it created; a full
// disk or a short write is an error naming the file that leaves no partial record; a file that
// is not ours, or corrupt before its last line, is named by its first bad line.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstring>
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

TEST(ResultJson, LibraryConfigIsAnObjectInTheLibrarysOrderOrNull) {
  PointResult r = measured();
  EXPECT_TRUE(result_json(r, "0123456789abcdef")["library_config"].is_null());  // custom algorithm
  r.library_config = {{"coll_tuned_use_dynamic_rules", "true"}, {"coll_tuned_allreduce_algorithm", "ring"}};
  const ordered_json c = result_json(r, "0123456789abcdef")["library_config"];
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(c.dump(), R"({"coll_tuned_use_dynamic_rules":"true","coll_tuned_allreduce_algorithm":"ring"})");
  r.library_config.emplace();  // a library that exposes nothing
  EXPECT_EQ(result_json(r, "0123456789abcdef")["library_config"].dump(), "{}");
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
  cfg.cases.push_back({{Op::allreduce}, {"all"}, Settings{}, "command line"});
  RunRecord run;
  run.run_id = "0123456789abcdef";
  run.argv = {"collbench", "--op", "allreduce"};
  run.start_time = "2026-01-01T00:00:00Z";
  run.topology = topology_from({0, 0, 2, 2}, {"a", "a", "b", "b"}, 0);
  run.backend = "mpi";
  run.device = "cpu";
  run.versions = {"0.1.0", "abc1234", {{"mpi", std::string("Open MPI v4.1.4")}}};
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
  EXPECT_EQ(j["config"]["cases"][0]["algos"], ordered_json::parse(R"(["all"])"));
  EXPECT_EQ(j["config"]["cases"][0]["settings"]["max_bytes"], 16 << 20);
  // The traits of every entry the plan can measure (allreduce, every algorithm on mpi), from the registry.
  std::map<std::string, ordered_json> algos;
  for (const auto& a : j["algorithms"]) algos[a["algo"].get<std::string>()] = a;
  ASSERT_TRUE(algos.count("hier_ring") && algos.count("library") && algos.count("shm"));
  EXPECT_EQ(algos["hier_ring"], ordered_json::parse(R"({"op":"allreduce","algo":"hier_ring","backend":"any","traits":)"
                                                    R"({"node_aware":true,"peer_memory":false,"library":false,"simplicity_rank":120}})"));
  EXPECT_TRUE(algos["shm"]["traits"]["peer_memory"]);
  EXPECT_TRUE(algos["library"]["traits"]["library"]);
  EXPECT_EQ(algos["library"]["backend"], "mpi");
  EXPECT_FALSE(algos.count("library:ring")) << "--algo all leaves the library's variants out";
  for (const auto& a : j["algorithms"]) EXPECT_EQ(a["op"], "allreduce");
  run.slurm = std::map<std::string, std::string>{{"job_id", "42"}};
  EXPECT_EQ(run_json(run)["slurm"]["job_id"], "42");
  // Provenance and link rates: absent until gathered (as in older records).
  for (const char* k : {"cpu_model", "hardware", "binding", "links"}) EXPECT_FALSE(j.contains(k)) << k;
  // The load: null when unread, else the three averages and the CPUs they are compared with.
  EXPECT_TRUE(j["loadavg"].is_null());
  EXPECT_TRUE(j["online_cpus"].is_null());
  run.loadavg = std::array<double, 3>{6.5, 11.25, 0.5};
  run.online_cpus = 2;
  EXPECT_EQ(run_json(run)["loadavg"], ordered_json::parse("[6.5,11.25,0.5]"));
  EXPECT_EQ(run_json(run)["online_cpus"], 2);
  NodeHardware hw;
  hw.host = "a";
  hw.cpu_model = "Test CPU";
  hw.packages = hw.numa_nodes = 1;
  hw.cores = hw.pus = 2;
  hw.caches = {{1, "data", 49152, 2}, {3, "unified", 1 << 25, 1}};
  hw.hwloc = "2.9.0";
  NodeHardware b = hw;
  b.host = "b";
  b.cpu_model.clear();
  run.provenance = Provenance{{{"0-1", "0"}, {"0-1", "0"}, {"2", ""}, {"3", "1"}}, {hw, b}};
  run.links = LinkRates{LinkRate{5.5, 0, 1, 1 << 20, 30, 0.04}, std::nullopt};
  const ordered_json p = run_json(run);
  EXPECT_EQ(p["cpu_model"], "Test CPU");
  EXPECT_EQ(p["hardware"].size(), 2u);
  EXPECT_EQ(p["hardware"][0]["caches"][1], (ordered_json{{"level", 3}, {"type", "unified"}, {"size_bytes", 1 << 25}, {"count", 1}}));
  EXPECT_TRUE(p["hardware"][1]["cpu_model"].is_null());
  EXPECT_FALSE(p["hardware"][0].contains("error"));
  EXPECT_EQ(p["binding"][0], (ordered_json{{"cpus", "0-1"}, {"numa", "0"}}));
  EXPECT_TRUE(p["binding"][2]["numa"].is_null());
  EXPECT_EQ(p["links"]["intra"], (ordered_json{{"GBps", 5.5}, {"src", 0}, {"dst", 1}, {"bytes", 1 << 20}, {"method", "bw"}, {"samples", 30}, {"spread", 0.04}}));
  EXPECT_TRUE(p["links"]["inter"].is_null());
}

TEST(EndJson, Fields) {
  EndRecord e{"id", "2026-01-01T00:00:01Z", 1, 10, 2, 3, 0, std::nullopt, std::nullopt};
  const ordered_json j = end_json(e);
  EXPECT_EQ(j["type"], "end");
  EXPECT_EQ(j["exit_status"], 1);
  EXPECT_EQ(j["points"], 10);
  EXPECT_EQ(j["wrong_points"], 2);
  EXPECT_EQ(j["skipped_points"], 3);
  EXPECT_FALSE(j.contains("expect"));  // only with --expect
  EXPECT_TRUE(j["loadavg"].is_null());
  e.loadavg = std::array<double, 3>{2.5, 1.0, 0.25};
  EXPECT_EQ(end_json(e)["loadavg"], ordered_json::parse("[2.5,1.0,0.25]"));
  e.exit_status = 5;
  e.expect = EndRecord::Expect{"e.yaml", 12, 2};
  const ordered_json g = end_json(e);
  EXPECT_EQ(g["exit_status"], 5);
  EXPECT_EQ(g["expect"], (ordered_json{{"file", "e.yaml"}, {"checked", 12}, {"failed", 2}}));
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

// A full device: every write fails with ENOSPC; the error names the file and the OS error, and
// the writer refuses further records instead of writing after a gap.
TEST_F(WriterTest, FullDiskIsAResultsWriteErrorNamingTheFile) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  JsonlWriter w("/dev/full", false);
  try {
    w.write(ordered_json{{"type", "result"}});
    ADD_FAILURE() << "a write to /dev/full succeeded";
  } catch (const ResultsWriteError& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::strerror(ENOSPC)), std::string::npos) << e.what();
  }
  EXPECT_THROW(w.write(ordered_json{{"type", "end"}}), ResultsWriteError);
}

// A short write (the space runs out mid-record) is undone: the file ends with the last whole
// record. RLIMIT_FSIZE makes the kernel write only up to the limit, as a full disk does.
TEST_F(WriterTest, ShortWriteLeavesNoPartialRecord) {
  const auto p = dir_ / "short.jsonl";
  JsonlWriter w(p.string(), false);
  const ordered_json rec = {{"type", "result"}, {"pad", std::string(100, 'x')}};
  w.write(rec);
  const auto whole = std::filesystem::file_size(p);
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = whole + 40;  // room for 40 bytes of the next record only
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  try {
    w.write(rec);
  } catch (const ResultsWriteError& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(std::filesystem::file_size(p), whole) << "the 40 bytes written of the second record were not removed";
  EXPECT_EQ(lines(p), 1);
}

TEST_F(WriterTest, ForeignLineNamesTheFirstLineThatIsNotOurs) {
  const auto p = dir_ / "f.jsonl";
  const std::string run = R"({"type":"run","schema":"collbench/1"})"
                          "\n";
  const std::string result = R"({"type":"result","schema":"collbench/1"})"
                             "\n";
  const auto with = [&](const std::string& text) {
    std::ofstream(p, std::ios::trunc) << text;
    return foreign_line(p.string());
  };
  EXPECT_EQ(foreign_line((dir_ / "missing.jsonl").string()), std::nullopt);
  EXPECT_EQ(foreign_line("/dev/null"), std::nullopt) << "only regular files are read (a tty or FIFO would block)";
  EXPECT_EQ(with(""), std::nullopt);
  EXPECT_EQ(with(run + result + "\n" + result), std::nullopt) << "blank lines are skipped by every reader";
  EXPECT_EQ(with(run + result + R"({"type":"resu)"), std::nullopt) << "a cut LAST line is a killed run's";
  const auto bad = [&](const std::string& text, const std::string& want) {
    const auto why = with(text);
    ASSERT_TRUE(why.has_value()) << text;
    EXPECT_EQ(why->rfind(p.string() + ":" + want, 0), 0u) << *why;
  };
  bad(run + "garbage\n" + result, "2: not valid JSON");
  bad(run +
          R"({"type":"resu)"
          "\n" +
          result,
      "2: not valid JSON");
  bad(R"({"name":"osu_latency"})"
      "\n",
      "1: not a collbench/1 record");
  bad(run + R"({"type":"result","schema":7})"
            "\n",
      "2: not a collbench/1 record");
  bad(run + "[1,2]\n", "2: not a collbench/1 record");
  bad(run + R"({"type":"bogus","schema":"collbench/1"})"
            "\n",
      "2: record type 'bogus'");
}
}  // namespace
}  // namespace collbench
