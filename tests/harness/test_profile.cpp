// --compute-profile: per-module backward times mapped onto a model's parameters.
#include <gtest/gtest.h>

#include "collectives/core/error.hpp"
#include "harness/workload/profile.hpp"

namespace collbench::workload {
namespace {

Model tiny() {
  Model m;
  m.name = "tiny";
  m.params = {{"layer1.weight", {300}, DType::float32},
              {"layer1.bias", {100}, DType::float32},
              {"layer10.weight", {50}, DType::float32},
              {"layer1.norm.weight", {100}, DType::float32}};
  return m;
}

std::string error_of(const std::string& text) {
  try {
    parse_compute_profile(text, "p.yaml", tiny());
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ComputeProfile, LongestPrefixWinsAndTimeIsSplitByBytes) {
  // layer1 covers layer1.weight and layer1.bias (not layer10.*): 4 ms split 300:100;
  // layer1.norm is longer than layer1, so it takes its own parameter.
  const ComputeProfile p = parse_compute_profile(
      "forward_ms: 5\noptimizer_ms: 1\nbackward_ms: {layer1: 4, layer10: 2, layer1.norm: 0.5}\n", "p.yaml", tiny());
  EXPECT_DOUBLE_EQ(p.forward_ms, 5);
  EXPECT_DOUBLE_EQ(p.optimizer_ms, 1);
  ASSERT_EQ(p.param_backward_ms.size(), 4u);
  EXPECT_DOUBLE_EQ(p.param_backward_ms[0], 3.0);
  EXPECT_DOUBLE_EQ(p.param_backward_ms[1], 1.0);
  EXPECT_DOUBLE_EQ(p.param_backward_ms[2], 2.0);
  EXPECT_DOUBLE_EQ(p.param_backward_ms[3], 0.5);
  EXPECT_DOUBLE_EQ(p.backward_ms(), 6.5);
}

TEST(ComputeProfile, JsonIsAcceptedToo) {
  const ComputeProfile p = parse_compute_profile(
      R"({"forward_ms": 1, "optimizer_ms": 0, "backward_ms": {"layer1": 1, "layer10": 1}})", "p.json", tiny());
  EXPECT_DOUBLE_EQ(p.backward_ms(), 2);
}

TEST(ComputeProfile, RefusesWhatWouldMisleadTheModel) {
  EXPECT_NE(error_of("forward_ms: 1\noptimizer_ms: 1\nbackward_ms: {layer1: 1}\n").find("'layer10.weight' of tiny is covered by no"),
            std::string::npos);
  EXPECT_NE(error_of("forward_ms: 1\noptimizer_ms: 1\nbackward_ms: {layer1: 1, layer10: 1, layer2: 1}\n")
                .find("line 3: 'layer2' covers no parameter of tiny"),
            std::string::npos);
  EXPECT_NE(error_of("forward_ms: -1\noptimizer_ms: 1\nbackward_ms: {layer1: 1, layer10: 1}\n").find("accepted: a number >= 0"),
            std::string::npos);
  EXPECT_NE(error_of("forward_ms: 1\nbackward_ms: {layer1: 1, layer10: 1}\n").find("missing a key"), std::string::npos);
  EXPECT_NE(error_of("forward_ms: 1\noptimizer_ms: 1\nbackward: {}\n").find("line 3: unknown key 'backward'"),
            std::string::npos);
  EXPECT_NE(error_of("forward_ms: [1\n").find("compute profile p.yaml: line"), std::string::npos);
  EXPECT_NE(error_of("forward_ms: fast\noptimizer_ms: 1\nbackward_ms: {layer1: 1, layer10: 1}\n").find("not a number"),
            std::string::npos);
}

TEST(ComputeProfile, AMissingFileIsOneLine) {
  try {
    load_compute_profile("/nonexistent/profile.yaml", tiny());
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "compute profile /nonexistent/profile.yaml: cannot read (no such file)");
  }
}

}  // namespace
}  // namespace collbench::workload
