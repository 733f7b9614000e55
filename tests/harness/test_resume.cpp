// --resume: point keys, which records count as done, truncated tails (harness/results/resume.hpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/results/records.hpp"
#include "harness/results/resume.hpp"

namespace collbench {
namespace {

PointResult point(const std::string& algo, std::uint64_t bytes) {
  PointResult r;
  r.op = "allreduce";
  r.algo = algo;
  r.backend = "mpi";
  r.device = "cpu";
  r.dtype = "float32";
  r.redop = "sum";
  r.bytes = bytes;
  r.count = bytes / 4;
  r.world_size = 4;
  r.nodes = 2;
  r.ranks_per_node = 2;
  return r;
}

std::string temp_file(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / ("collbench_resume_" + name);
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::string line(const PointResult& r) { return result_json(r, "run").dump() + "\n"; }

TEST(Resume, KeyOfARecordMatchesTheKeyComputedBeforeMeasuring) {
  PointResult measured = point("ring", 1024);
  measured.iters = 77;  // how long it was measured is not part of the key
  measured.wrong = 0;
  const auto rec = nlohmann::json::parse(result_json(measured, "x").dump());
  EXPECT_EQ(record_key(rec), point_key(point("ring", 1024)));
  EXPECT_NE(record_key(rec), point_key(point("ring", 2048)));
  EXPECT_NE(record_key(rec), point_key(point("tree", 1024)));
  PointResult other_world = point("ring", 1024);
  other_world.world_size = 8;
  EXPECT_NE(record_key(rec), point_key(other_world));
  EXPECT_FALSE(record_key(nlohmann::json::parse(R"({"type":"run","schema":"collbench/1"})")));
  EXPECT_FALSE(record_key(nlohmann::json::parse(R"({"type":"result","schema":"collbench/2"})")));
}

TEST(Resume, WrongPointsAreMeasuredAgainSkippedOnesAreNot) {
  PointResult ok = point("ring", 8), wrong = point("ring", 16), skipped = point("ring", 32);
  wrong.wrong = 3;
  skipped.skipped = true;
  skipped.skip_reason = "no";
  const std::string path = temp_file("done", line(ok) + line(wrong) + line(skipped));
  const auto done = read_done_points(path, [](const std::string&) {});
  EXPECT_EQ(done.count(point_key(point("ring", 8))), 1u);
  EXPECT_EQ(done.count(point_key(point("ring", 16))), 0u);
  EXPECT_EQ(done.count(point_key(point("ring", 32))), 1u);
}

TEST(Resume, InvalidLinesAreWarnedAboutAndIgnored) {
  const std::string path = temp_file("bad", line(point("ring", 8)) + "{\"type\":\"resu");
  std::vector<std::string> warnings;
  const auto done = read_done_points(path, [&](const std::string& w) { warnings.push_back(w); });
  EXPECT_EQ(done.size(), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(":2: not valid JSON"), std::string::npos);
  EXPECT_TRUE(read_done_points("/nonexistent/x.jsonl", [](const std::string&) {}).empty());
}

TEST(Resume, DropTruncatedTailRemovesOnlyTheFragment) {
  const std::string whole = line(point("ring", 8));
  const std::string path = temp_file("tail", whole + "{\"type\":\"res");
  EXPECT_EQ(drop_truncated_tail(path), 12u);
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  EXPECT_EQ(ss.str(), whole);
  EXPECT_EQ(drop_truncated_tail(path), 0u);  // a complete file is left alone
  EXPECT_EQ(drop_truncated_tail(temp_file("empty", "")), 0u);
  EXPECT_EQ(drop_truncated_tail(std::filesystem::temp_directory_path().string()), 0u);  // a directory
  const std::string frag = temp_file("frag", "{\"ty");
  EXPECT_EQ(drop_truncated_tail(frag), 4u);
  EXPECT_EQ(std::filesystem::file_size(frag), 0u);
}

}  // namespace
}  // namespace collbench
