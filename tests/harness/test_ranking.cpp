// The one ranking rule of the table's best column and the analysis (colltune's "spread" tie).
#include <gtest/gtest.h>

#include "harness/report/ranking.hpp"

#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace collbench {
namespace {

Stats t(double p5, double p50, double p95) {
  Stats s;
  s.p5 = p5;
  s.p50 = p50;
  s.p95 = p95;
  return s;
}

std::vector<Candidate> of(std::initializer_list<const Stats*> times) {
  std::vector<Candidate> out;
  for (const Stats* s : times) out.push_back({s, 0, "x"});
  return out;
}

TEST(Ranking, LowestP50WinsWithTheRunnerUpsMargin) {
  const Stats a = t(9, 10, 11), b = t(13, 15, 17), c = t(11, 12, 13);
  const auto v = of({&a, &b, &c});
  const auto r = rank_times(v);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->best, 0u);
  EXPECT_EQ(r->runner_up, 2u);
  EXPECT_NEAR(r->margin, 0.2, 1e-12);
  EXPECT_FALSE(r->tied) << "12 is beyond the best's p95 of 11";
}

TEST(Ranking, ARunnerUpInsideTheBestsSpreadIsATie) {
  // The case: ring faster by 4 % with overlapping p5-p95 bands.
  const Stats ring = t(90, 100, 130), library = t(95, 104, 120);
  const auto v = of({&library, &ring});
  const auto r = rank_times(v);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->best, 1u);
  EXPECT_TRUE(r->tied);
  const Stats edge = t(100, 130, 140);  // exactly at the best's p95: a tie (<=)
  const auto w = of({&ring, &edge});
  EXPECT_TRUE(rank_times(w)->tied);
}

TEST(Ranking, UnmeasuredCandidatesAreLeftOut) {
  const Stats a = t(9, 10, 11);
  EXPECT_FALSE(rank_times(of({nullptr, nullptr})));
  const auto one = of({nullptr, &a});
  const auto r = rank_times(one);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->best, 1u);
  EXPECT_FALSE(r->runner_up);
  EXPECT_FALSE(r->tied);
}

TEST(Ranking, EqualTimesGoToTheSimplerThenTheName) {  // as analysis/collbench_analysis/ranking.py
  const Stats a = t(9, 10, 11);
  const Candidate by_rank[] = {{&a, 30, "ring"}, {&a, 0, "library"}};
  EXPECT_EQ(rank_times(by_rank)->best, 1u);
  const Candidate by_name[] = {{&a, 30, "tree"}, {&a, 30, "ring"}};
  EXPECT_EQ(rank_times(by_name)->best, 1u);
}

TEST(Ranking, WideSpread) {
  EXPECT_TRUE(wide_spread(t(1.31, 122.44, 247.87)));
  EXPECT_FALSE(wide_spread(t(9, 10, 11)));
  EXPECT_FALSE(wide_spread(t(10, 10, 15)));  // exactly 50 %: not above
}

// The cases the analysis' rule is tested on too (tests/analysis/test_tiny_report.py): one rule.
TEST(Ranking, AgreesWithTheAnalysisOnTheSharedCases) {
  std::ifstream in(COLLBENCH_RANKING_CASES);
  ASSERT_TRUE(in) << COLLBENCH_RANKING_CASES;
  const auto doc = nlohmann::json::parse(in);
  for (const auto& c : doc.at("cases")) {
    std::vector<Stats> stats;
    std::vector<std::string> names;
    for (const auto& k : c.at("candidates")) {
      stats.push_back(t(k.at("p5"), k.at("p50"), k.at("p95")));
      names.push_back(k.at("algo"));
    }
    std::vector<Candidate> cands;
    for (std::size_t i = 0; i < stats.size(); ++i)
      cands.push_back({&stats[i], c.at("candidates")[i].at("rank").get<int>(), names[i]});
    const auto r = rank_times(cands);
    ASSERT_TRUE(r) << c.at("name");
    EXPECT_EQ(names[r->best], c.at("best").get<std::string>()) << c.at("name");
    if (c.at("runner_up").is_null()) {
      EXPECT_FALSE(r->runner_up) << c.at("name");
    } else {
      ASSERT_TRUE(r->runner_up) << c.at("name");
      EXPECT_EQ(names[*r->runner_up], c.at("runner_up").get<std::string>()) << c.at("name");
    }
    EXPECT_NEAR(r->margin, c.at("margin").get<double>(), 1e-12) << c.at("name");
    EXPECT_EQ(r->tied, c.at("tied").get<bool>()) << c.at("name");
  }
}

}  // namespace
}  // namespace collbench
