// Op and algorithm names as people type them (harness/plan/spelling.hpp, settings.cpp's parse_ops).
#include <gtest/gtest.h>

#include "collectives/core/error.hpp"
#include "harness/plan/settings.hpp"
#include "harness/plan/spelling.hpp"

namespace collbench {
namespace {

TEST(Spelling, EditDistanceCountsASwapAsOne) {
  EXPECT_EQ(edit_distance("ring", "ring"), 0u);
  EXPECT_EQ(edit_distance("rnig", "ring"), 1u);
  EXPECT_EQ(edit_distance("allreduc", "allreduce"), 1u);
  EXPECT_EQ(edit_distance("", "tree"), 4u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Spelling, OpSpellingsOfOtherTools) {
  const std::pair<const char*, const char*> cases[] = {
      {"all_reduce", "allreduce"},        {"allReduce", "allreduce"},         {"AllReduce", "allreduce"},
      {"ALLREDUCE", "allreduce"},         {"bcast", "broadcast"},             {"Bcast", "broadcast"},
      {"reduce_scatter", "reduce_scatter"}, {"reducescatter", "reduce_scatter"}, {"ReduceScatter", "reduce_scatter"},
      {"all_gather", "allgather"},        {"alltoall", "alltoall"},           {"all_to_all", "alltoall"},
      {"all-to-all", "alltoall"},         {"Gather", "gather"},               {"PingPong", "pingpong"},
  };
  for (const auto& [typed, name] : cases) {
    EXPECT_EQ(canonical_op_name(typed), std::optional<std::string>(name)) << typed;
    EXPECT_EQ(parse_ops(typed).size(), 1u) << typed;
  }
  EXPECT_EQ(parse_ops("all_reduce,allreduce,AllReduce").size(), 1u) << "one op, however spelt";
  EXPECT_EQ(parse_ops("ALL").size(), 8u);
}

std::string error_of(std::string_view ops) {
  try {
    parse_ops(ops);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Spelling, DidYouMeanForANearMissOnly) {
  EXPECT_NE(error_of("allreduc").find("unknown op 'allreduc' (did you mean allreduce?); accepted: "),
            std::string::npos)
      << error_of("allreduc");
  EXPECT_NE(error_of("brodcast").find("(did you mean broadcast?)"), std::string::npos);
  EXPECT_NE(error_of("all_gahter").find("(did you mean allgather?)"), std::string::npos);
  EXPECT_EQ(error_of("transpose").find("did you mean"), std::string::npos) << error_of("transpose");
  EXPECT_EQ(did_you_mean("xyz", {"ring", "tree"}), "");
  EXPECT_EQ(did_you_mean("Rign", {"ring", "tree"}), " (did you mean ring?)");
  // A library variant by its own name.
  EXPECT_EQ(did_you_mean("binomal", {"tree", "library", "library:binomial"}), " (did you mean library:binomial?)");
}

TEST(Spelling, NcclTestsOpIsTheReduction) {
  const std::string e = error_of("sum");
  EXPECT_NE(e.find("--op sum: collbench's --op names the collective"), std::string::npos) << e;
  EXPECT_NE(e.find("-o/--redop sum"), std::string::npos) << e;
  EXPECT_NE(e.find("; accepted: "), std::string::npos) << e;
}

TEST(Spelling, AlgoNamesAreLowerCased) {
  EXPECT_EQ(parse_algos("Ring,RING,ring"), std::vector<std::string>{"ring"});
  EXPECT_EQ(parse_algos("All"), std::vector<std::string>{"all"});
  EXPECT_EQ(same_name("hier-ring", {"hier_ring", "ring"}), std::optional<std::string>("hier_ring"));
}

}  // namespace
}  // namespace collbench
