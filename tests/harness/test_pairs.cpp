// Pair selection for --op pingpong (pure: node maps in, pairs out), the --pairs setting on the
// command line and in YAML, and how pingpong enters the plan.
#include <gtest/gtest.h>

#include <functional>

#include "collectives/core/error.hpp"
#include "harness/plan/cli.hpp"
#include "harness/plan/config.hpp"
#include "harness/measure/p2p_point.hpp"
#include "harness/plan/plan.hpp"
#include "harness/results/records.hpp"
#include "command_line.hpp"

namespace collbench {
namespace {

using testing::parse_config;

using Pairs = std::vector<SelectedPair>;

SelectedPair intra(int a, int b) { return {{a, b}, true}; }
SelectedPair inter(int a, int b) { return {{a, b}, false}; }

std::vector<SelectedPair> auto_on(std::vector<int> node_of_rank) { return select_pairs({}, node_of_rank); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Pairs, AutoOnOneNodeIsTheFirstTwoRanks) {
  EXPECT_EQ(auto_on({0, 0}), (Pairs{intra(0, 1)}));
  EXPECT_EQ(auto_on({0, 0, 0, 0}), (Pairs{intra(0, 1)}));
}

TEST(Pairs, AutoOnTwoNodesGivesOneIntraAndOneInterPair) {
  EXPECT_EQ(auto_on({0, 0, 1, 1}), (Pairs{intra(0, 1), inter(0, 2)}));  // 2x2 block
  EXPECT_EQ(auto_on({0, 1, 0, 1}), (Pairs{intra(0, 2), inter(0, 1)}));  // round-robin placement
  EXPECT_EQ(auto_on({0, 0, 0, 1, 1, 1}), (Pairs{intra(0, 1), inter(0, 3)}));
}

TEST(Pairs, AutoWithOneRankPerNodeHasNoIntraPair) {
  EXPECT_EQ(auto_on({0, 1}), (Pairs{inter(0, 1)}));
  EXPECT_EQ(auto_on({0, 1, 2}), (Pairs{inter(0, 1)}));
}

TEST(Pairs, AutoOnUnevenLayouts) {
  EXPECT_EQ(auto_on({0, 1, 1}), (Pairs{intra(1, 2), inter(0, 1)}));  // rank 0 alone on its node
  EXPECT_EQ(auto_on({0, 0, 0, 1}), (Pairs{intra(0, 1), inter(0, 3)}));
  EXPECT_EQ(auto_on({0, 1, 2, 2}), (Pairs{intra(2, 3), inter(0, 1)}));
}

TEST(Pairs, AllIsEveryPairInOrderWithItsLink) {
  const PairSpec all = parse_pairs("all");
  EXPECT_EQ(select_pairs(all, {0, 0, 1}), (Pairs{intra(0, 1), inter(0, 2), inter(1, 2)}));
  EXPECT_EQ(select_pairs(all, std::vector<int>(8, 0)).size(), 28u);
  EXPECT_EQ(select_pairs(all, {0, 1}), (Pairs{inter(0, 1)}));
}

TEST(Pairs, ExplicitListKeepsOrderAndDirectionDropsRepeats) {
  const PairSpec s = parse_pairs("0-1, 0-4,4-0,0-1");
  EXPECT_EQ(s.kind, PairSpec::Kind::list);
  EXPECT_EQ(s.list, (std::vector<RankPair>{{0, 1}, {0, 4}, {4, 0}}));
  EXPECT_EQ(pairs_text(s), "0-1,0-4,4-0");
  EXPECT_EQ(select_pairs(s, {0, 0, 0, 1, 1}), (Pairs{intra(0, 1), inter(0, 4), inter(4, 0)}));
  EXPECT_EQ(pairs_text(parse_pairs("auto")), "auto");
  EXPECT_EQ(pairs_text(parse_pairs("all")), "all");
}

TEST(Pairs, BadListsAreRefusedWithTheAcceptedSyntax) {
  for (const char* bad :
       {"", "0", "0-0", "3-3", "a-b", "0-1,", ",0-1", "-1-2", "0--1", "0-1-2", "1.5-2", "0-99999999999", "none"}) {
    const std::string e = error_of([&] { parse_pairs(bad); });
    EXPECT_NE(e.find("; accepted: auto, all, or rank pairs"), std::string::npos) << "'" << bad << "': " << e;
  }
  EXPECT_NE(error_of([] { parse_pairs("2-2"); }).find("names one rank twice"), std::string::npos);
}

TEST(Pairs, ListedRanksMustBeInsideTheWorld) {
  const std::string e = error_of([] { select_pairs(parse_pairs("0-1,0-4"), {0, 0, 1, 1}); });
  EXPECT_NE(e.find("pair 0-4 is outside the world of 4 ranks; accepted: ranks 0..3"), std::string::npos) << e;
  EXPECT_NE(error_of([] { select_pairs({}, {0}); }).find("at least 2 ranks"), std::string::npos);
}

TEST(PairsSetting, CommandLineAndYamlAgree) {
  const RunConfig cli = parse_config({"--op", "pingpong", "--pairs", "0-1,0-2"});
  const SweepFile f = parse_sweep_yaml("cases:\n  - {op: pingpong, pairs: [0-1, 0-2]}\n", "s.yaml");
  ASSERT_EQ(f.cases.size(), 1u);
  EXPECT_EQ(cli.cases[0].settings.pairs, f.cases[0].settings.pairs);
  EXPECT_EQ(f.cases[0].ops, std::vector<OpChoice>{Pingpong{}});
  EXPECT_EQ(config_json(cli)["cases"][0]["settings"]["pairs"], "0-1,0-2");
  EXPECT_EQ(config_json(cli)["cases"][0]["ops"], nlohmann::ordered_json::array({"pingpong"}));
  EXPECT_EQ(parse_config({}).cases[0].settings.pairs.kind, PairSpec::Kind::automatic);
  EXPECT_NE(error_of([] {
              parse_config({"--op", "pingpong", "--pairs", "1-1"});
            }).find("--pairs: pair '1-1'"),
            std::string::npos);
}

TEST(PingpongPlan, OneBlockPerMethodInTheOrderOfOps) {
  const RunConfig cfg = parse_config({"--op", "allreduce,pingpong,broadcast", "--algo", "all"});
  const auto plan = make_plan(cfg, Registry::get());
  ASSERT_EQ(plan.size(), 5u);
  ASSERT_TRUE(std::holds_alternative<CollectiveBlock>(plan[0]));
  EXPECT_EQ(std::get<CollectiveBlock>(plan[0]).op, Op::allreduce);
  EXPECT_EQ(std::get<P2pBlock>(plan[1]).method, P2pMethod::latency);
  EXPECT_EQ(std::get<P2pBlock>(plan[2]).method, P2pMethod::bw);
  EXPECT_EQ(std::get<P2pBlock>(plan[3]).method, P2pMethod::bibw);
  ASSERT_TRUE(std::holds_alternative<CollectiveBlock>(plan[4]));
  EXPECT_EQ(std::get<CollectiveBlock>(plan[4]).op, Op::broadcast);
}

TEST(PingpongPlan, MethodsTimingModesAndWorldChecks) {
  EXPECT_EQ(make_plan(parse_config({"--op", "pingpong", "--algo", "bw,latency"}), Registry::get()).size(), 2u);
  EXPECT_NE(error_of([] {
              make_plan(parse_config({"--op", "pingpong", "--algo", "ring"}), Registry::get());
            }).find("unknown algo 'ring' for op pingpong; accepted: latency, bw, bibw, all"),
            std::string::npos);
  for (const char* flag : {"--batch", "--interleave"})
    EXPECT_NE(error_of([&] {
                make_plan(parse_config({"--op", "pingpong", flag}), Registry::get());
              }).find("does not apply to pingpong"),
              std::string::npos);
  const auto plan = make_plan(parse_config({"--op", "pingpong", "--pairs", "0-3"}), Registry::get());
  EXPECT_THROW(check_plan_for_world(plan, 3), UsageError);
  EXPECT_NO_THROW(check_plan_for_world(plan, 4));
  EXPECT_THROW(check_plan_for_world(make_plan(parse_config({"--op", "pingpong"}), Registry::get()), 1), UsageError);
  EXPECT_NE(error_of([] {
              parse_config({"--op", "ping"});
            }).find("pingpong"),
            std::string::npos)
      << "accepted ops list pingpong";
}

TEST(PingpongPlan, WindowReceiveSlotsFitIn64MiB) {
  EXPECT_EQ(p2p_recv_slots(P2pMethod::latency, 1 << 20), 1u);
  EXPECT_EQ(p2p_recv_slots(P2pMethod::bw, 0), 64u);
  EXPECT_EQ(p2p_recv_slots(P2pMethod::bw, 1 << 20), 64u);
  EXPECT_EQ(p2p_recv_slots(P2pMethod::bibw, 16 << 20), 4u);
  EXPECT_EQ(p2p_recv_slots(P2pMethod::bw, 1ull << 30), 1u);
}

}  // namespace
}  // namespace collbench
