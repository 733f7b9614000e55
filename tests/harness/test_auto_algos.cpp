// --algo auto: the per-size choice the plan's placeholder becomes (harness/plan/auto_algos.cpp),
// from a tuning file (collectives/formats/tuning.hpp).
#include <gtest/gtest.h>

#include <string>

#include "collectives/core/error.hpp"
#include "collectives/formats/tuning.hpp"
#include "harness/plan/auto_algos.hpp"
#include "harness/plan/plan.hpp"

namespace collbench {
namespace {

// As colltune writes it, one layout: 2 nodes x 2 ranks.
const std::string kTwoByTwo =
    "schema: collbench-tuning/1\ntool: colltune\nentries:\n  - op: allreduce\n    backend: mpi\n    device: cpu\n"
    "    layout: {nodes: 2, ranks_per_node: 2, world_size: 4}\n    ranges:\n"
    "      - {min_bytes: 0, max_bytes: 4095, algo: library}\n"
    "      - {min_bytes: 4096, max_bytes: 1048575, algo: hier_leader}\n"
    "      - {min_bytes: 1048576, max_bytes: null, algo: hier_ring}\n";

TunedLayout even(int nodes, int per) { return {std::vector<int>(static_cast<std::size_t>(nodes), per)}; }

TEST(AutoAlgos, EachSizeRunsTheChosenEntryUnderTheNameAuto) {
  RunConfig cfg;
  cfg.tuning_path = "t.yaml";
  cfg.cases.push_back({{Op::allreduce}, {"auto", "ring"}, Settings{}, "test"});
  const auto plan = make_plan(cfg, Registry::get());
  ASSERT_TRUE(has_auto(plan));
  const auto& block = std::get<CollectiveBlock>(plan[0]);
  AutoAlgos autos(Tuning::parse(kTwoByTwo, "t.yaml"), Registry::get(), "mpi", "cpu", even(2, 2));
  for (auto [bytes, algo] :
       {std::pair<std::uint64_t, const char*>{8, "library"}, {65536, "hier_leader"}, {1u << 22, "hier_ring"}}) {
    const CollectiveBlock sized = autos.resolve(block, bytes);
    ASSERT_EQ(sized.algos.size(), 2u);
    const AlgoEntry& e = *sized.algos[0];
    EXPECT_EQ(e.algo, "auto");
    EXPECT_EQ(e.run, Registry::get().find(Op::allreduce, algo, "mpi")->run) << algo;
    ASSERT_NE(autos.choice_of(e), nullptr);
    EXPECT_EQ(autos.choice_of(e)->algo, algo);
    EXPECT_EQ(sized.algos[1]->algo, "ring");  // other slots untouched
    EXPECT_EQ(autos.choice_of(*sized.algos[1]), nullptr);
  }
  // The same choice again reuses its entry (no growth per size).
  EXPECT_EQ(autos.resolve(block, 8).algos[0], autos.resolve(block, 16).algos[0]);
}

TEST(AutoAlgos, AnAlgorithmThisBuildLacksRunsTheLibraryAndSaysSo) {
  const std::string file =
      "schema: collbench-tuning/1\nentries:\n  - op: allreduce\n    backend: mpi\n    device: cpu\n"
      "    layout: {nodes: 1, ranks_per_node: 2, world_size: 2}\n    ranges:\n"
      "      - {min_bytes: 0, max_bytes: null, algo: quantum_ring}\n";
  RunConfig cfg;
  cfg.tuning_path = "q.yaml";
  cfg.cases.push_back({{Op::allreduce}, {"auto"}, Settings{}, "test"});
  const auto plan = make_plan(cfg, Registry::get());
  AutoAlgos autos(Tuning::parse(file, "q.yaml"), Registry::get(), "mpi", "cpu", even(1, 2));
  const CollectiveBlock sized = autos.resolve(std::get<CollectiveBlock>(plan[0]), 8);
  const TunedChoice* c = autos.choice_of(*sized.algos[0]);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->algo, "library");
  EXPECT_EQ(c->origin, "q.yaml:8");
  EXPECT_NE(c->match.find("'quantum_ring' is not available here"), std::string::npos) << c->match;
}

TEST(AutoAlgos, AutoWithoutATuningFileIsRefusedWhenPlanning) {
  RunConfig cfg;
  cfg.cases.push_back({{Op::allreduce}, {"auto"}, Settings{}, "test"});
  try {
    make_plan(cfg, Registry::get());
    ADD_FAILURE() << "planned --algo auto without --tuning";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--tuning FILE"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace collbench
