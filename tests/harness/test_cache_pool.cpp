// --cache cold's pieces: the LLC from sysfs, the pool's layout, its memory in the checks, the
// plan's refusals; --per-rank's record (matrices, summary, the cap).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "collectives/core/error.hpp"
#include "harness/plan/plan.hpp"
#include "harness/results/records.hpp"
#include "harness/runtime/cache_pool.hpp"
#include "harness/runtime/memcheck.hpp"

namespace collbench {
namespace {

constexpr std::uint64_t MiB = 1 << 20;

TEST(CachePool, SysfsSizes) {
  EXPECT_EQ(parse_sysfs_cache_size("266240K"), 266240ull << 10);
  EXPECT_EQ(parse_sysfs_cache_size("32M"), 32 * MiB);
  EXPECT_EQ(parse_sysfs_cache_size("512"), 512u);
  EXPECT_EQ(parse_sysfs_cache_size(""), 0u);
  EXPECT_EQ(parse_sysfs_cache_size("big"), 0u);
  EXPECT_EQ(parse_sysfs_cache_size("12Q"), 0u);
}

void write(const std::filesystem::path& p, const std::string& s) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << s << "\n";
}

TEST(CachePool, TheHighestDataOrUnifiedLevelIsTheLastLevel) {
  const auto dir = std::filesystem::temp_directory_path() / ("cb_cache_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const auto cache = [&](int i, int level, const char* type, const char* size) {
    write(dir / ("index" + std::to_string(i)) / "level", std::to_string(level));
    write(dir / ("index" + std::to_string(i)) / "type", type);
    write(dir / ("index" + std::to_string(i)) / "size", size);
  };
  cache(0, 1, "Data", "48K");
  cache(1, 1, "Instruction", "32K");
  cache(2, 2, "Unified", "2048K");
  EXPECT_EQ(last_level_cache_from(dir.string()).bytes, 2048ull << 10);
  cache(3, 3, "Unified", "266240K");
  cache(4, 4, "Instruction", "1G");  // never holds buffers
  const LastLevelCache c = last_level_cache_from(dir.string());
  EXPECT_EQ(c.bytes, 266240ull << 10);
  EXPECT_EQ(c.source, "sysfs");
  EXPECT_EQ(last_level_cache_from((dir / "none").string()).bytes, 0u);
  std::filesystem::remove_all(dir);
  EXPECT_GT(last_level_cache().bytes, 0u) << "this machine: sysfs, sysconf, or the assumed 32 MiB";
}

TEST(CachePool, LayoutExceedsTheTargetWithAtLeastTwoPageAlignedSets) {
  const ColdPool small = cold_pool_layout(8, 8, 64 * MiB);
  EXPECT_EQ(small.send_stride, 4096u);
  EXPECT_EQ(small.recv_stride, 4096u);
  EXPECT_EQ(small.sets, 64 * MiB / 8192);
  EXPECT_GE(small.bytes(), 64 * MiB);
  const ColdPool odd = cold_pool_layout(5000, 3 * 5000, 1 * MiB);
  EXPECT_EQ(odd.send_stride, 8192u);
  EXPECT_EQ(odd.recv_stride, 16384u);
  EXPECT_GE(odd.bytes(), 1 * MiB);
  EXPECT_LT(odd.bytes() - 1 * MiB, odd.send_stride + odd.recv_stride) << "no more sets than needed";
  const ColdPool big = cold_pool_layout(64 * MiB, 64 * MiB, 64 * MiB);
  EXPECT_EQ(big.sets, 2u) << "two sets even when one exceeds the target: a set is never reused back to back";
  const ColdPool none = cold_pool_layout(0, 0, 64 * MiB);
  EXPECT_EQ(none.sets, 1u);
  EXPECT_EQ(none.bytes(), 0u);
  Settings s;
  EXPECT_EQ(cold_pool_target(s, 32 * MiB), 64 * MiB);
  s.cache_pool_bytes = 8 * MiB;
  EXPECT_EQ(cold_pool_target(s, 32 * MiB), 8 * MiB);
}

TEST(CachePool, MemoryChecksCountThePool) {
  const PointMemory hot = point_memory_need(Op::allreduce, 256, DType::float32, 2);
  const PointMemory cold = point_memory_need(Op::allreduce, 256, DType::float32, 2, 512 * MiB);
  EXPECT_EQ(hot.buffers, 2048u);
  EXPECT_GE(cold.buffers, 512 * MiB);
  EXPECT_EQ(cold.extra, hot.extra);
  Settings s;
  s.cache_cold = true;
  s.min_bytes = s.max_bytes = 1 * MiB;
  RunConfig cfg;
  cfg.cases.push_back({{Op::allreduce}, {"ring"}, s, "test"});
  const auto plan = make_plan(cfg, Registry::get());
  const std::uint64_t llc = 256 * MiB;
  EXPECT_FALSE(plan_memory_problem(plan, 2, 2, 4096 * MiB, false, llc)) << "2 x 512 MiB pools fit in 4 GiB";
  const auto why = plan_memory_problem(plan, 2, 2, 1024 * MiB, false, llc);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("--cache cold: a pool of"), std::string::npos) << *why;
  EXPECT_NE(why->find("--cache-pool"), std::string::npos) << *why;
}

TEST(CachePool, PlanRefusesColdWhereItHasNoMeaning) {
  Settings s;
  s.cache_cold = true;
  RunConfig cfg;
  cfg.device = "cuda";
  cfg.cases.push_back({{Op::allreduce}, {"ring"}, s, "test"});
  EXPECT_THROW(make_plan(cfg, Registry::get()), UsageError);
  cfg.device = "cpu";
  cfg.cases[0].ops = {Pingpong{}};
  cfg.cases[0].algos = {};
  EXPECT_THROW(make_plan(cfg, Registry::get()), UsageError);
}

PointResult with_per_rank(std::size_t ranks, std::size_t samples) {
  PointResult r;
  r.op = "allreduce";
  r.algo = "ring";
  r.time_us = Stats{1, 2, 3, 4, 5, 6, 7, 0.5, static_cast<long>(samples)};
  PointResult::PerRank p;
  p.start_ref = "agreed";
  for (std::size_t k = 0; k < ranks; ++k) {
    std::vector<double> t, s;
    for (std::size_t i = 0; i < samples; ++i) {
      t.push_back(k == 1 ? 100.0 + i : 10.0 + double(i % 3));  // rank 1 slowest in every sample
      s.push_back(0.25 * double(k));
    }
    p.time_us.push_back(t);
    p.start_skew_us.push_back(s);
  }
  r.per_rank = p;
  return r;
}

TEST(PerRankJson, MatricesAndSummary) {
  const auto j = result_json(with_per_rank(3, 4), "0123456789abcdef");
  const auto& p = j.at("per_rank");
  EXPECT_EQ(p.at("start"), "agreed");
  EXPECT_EQ(p.at("ranks"), 3);
  EXPECT_EQ(p.at("samples"), 4);
  ASSERT_EQ(p.at("time_us").size(), 3u);
  EXPECT_EQ(p.at("time_us")[1][3], 103.0);
  EXPECT_EQ(p.at("start_skew_us")[2][0], 0.5);
  const auto& s = p.at("summary");
  EXPECT_EQ(s.at("slowest_samples"), (nlohmann::ordered_json{0, 4, 0}));
  EXPECT_DOUBLE_EQ(s.at("time_p50_us")[1].get<double>(), 101.5);
  EXPECT_DOUBLE_EQ(s.at("time_p25_us")[1].get<double>(), 100.75);
  EXPECT_DOUBLE_EQ(s.at("start_skew_p50_us")[2].get<double>(), 0.5);
  EXPECT_EQ(j.at("cache"), "hot");
  EXPECT_FALSE(j.contains("cache_pool"));
}

TEST(PerRankJson, PastTheCapOnlyTheSummary) {
  const std::size_t samples = kPerRankMaxValues / 4 + 1;
  const auto j = result_json(with_per_rank(4, samples), "0123456789abcdef");
  EXPECT_TRUE(j.at("per_rank").at("time_us").is_null());
  EXPECT_TRUE(j.at("per_rank").at("start_skew_us").is_null());
  EXPECT_EQ(j.at("per_rank").at("summary").at("slowest_samples")[1], samples);
}

TEST(VerifiedSetCount, EverySetUpTo64AndUpTo64MiB) {
  EXPECT_EQ(verified_set_count(10, 4096), 10u);                 // few small sets: all
  EXPECT_EQ(verified_set_count(66560, 16 * 1024), 64u);         // many small: 64
  EXPECT_EQ(verified_set_count(120, 4 * MiB), 16u);             // 64 MiB of 4 MiB sets
  EXPECT_EQ(verified_set_count(30, 64 * MiB), 2u);              // large sets: the first and the last
  EXPECT_EQ(verified_set_count(2, 512 * MiB), 2u);
  EXPECT_EQ(verified_set_count(1, 0), 1u);                      // an empty point's one set
}

TEST(CachePoolJson, ColdRecordsCarryThePool) {
  PointResult r = with_per_rank(2, 2);
  r.per_rank.reset();
  r.cache_cold = true;
  r.cache_pool = PointResult::CachePool{64 * MiB, 32, 2 * MiB, 32 * MiB, "sysfs", 32};
  const auto j = result_json(r, "0123456789abcdef");
  EXPECT_EQ(j.at("cache"), "cold");
  EXPECT_EQ(j.at("cache_pool").at("sets"), 32);
  EXPECT_EQ(j.at("cache_pool").at("llc_source"), "sysfs");
  EXPECT_EQ(j.at("cache_pool").at("verified_sets"), 32);
  EXPECT_FALSE(j.contains("per_rank"));
}

}  // namespace
}  // namespace collbench
