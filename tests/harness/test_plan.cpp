// The sweep plan (algo resolution against the registry), topology facts and launch checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "collectives/core/error.hpp"
#include "harness/plan/plan.hpp"
#include "harness/plan/settings.hpp"
#include "harness/runtime/topology.hpp"

namespace collbench {
namespace {

RunConfig one_case(std::vector<OpChoice> ops, std::vector<std::string> algos, Settings s = {}) {
  RunConfig cfg;
  cfg.cases.push_back({std::move(ops), std::move(algos), std::move(s), "test"});
  return cfg;
}

const CollectiveBlock& coll(const Block& b) { return std::get<CollectiveBlock>(b); }

// Registered algorithms of an op on the mpi backend, with or without the library's variants.
std::size_t registered(Op op, bool variants) {
  std::size_t n = 0;
  for (const AlgoEntry* e : Registry::get().for_op(op, "mpi")) n += e->on_request == variants;
  return n;
}

TEST(Plan, NoAlgoMeansTheLibrarysOwnAsNcclTests) {
  const auto plan = make_plan(one_case({Op::allreduce, Pingpong{}}, {}), Registry::get());
  ASSERT_EQ(plan.size(), 1u + 3u);  // pingpong: every method (latency, bw, bibw are three metrics)
  ASSERT_EQ(coll(plan[0]).algos.size(), 1u);
  EXPECT_EQ(coll(plan[0]).algos[0]->algo, "library");
  EXPECT_EQ(coll(plan[0]).algos[0]->backend, "mpi");
  RunConfig thread = one_case({Op::allreduce}, {});
  thread.backend = "thread";  // no library of its own: every algorithm
  const auto t = make_plan(thread, Registry::get());
  EXPECT_GT(coll(t[0]).algos.size(), 3u);
}

TEST(Plan, AlgoNamesAnyCaseAndDidYouMean) {
  const auto plan = make_plan(one_case({Op::allreduce}, parse_algos("Ring,RABENSEIFNER,hier-ring")), Registry::get());
  ASSERT_EQ(coll(plan[0]).algos.size(), 3u);
  EXPECT_EQ(coll(plan[0]).algos[0]->algo, "ring");
  EXPECT_EQ(coll(plan[0]).algos[1]->algo, "rabenseifner");
  EXPECT_EQ(coll(plan[0]).algos[2]->algo, "hier_ring");
  try {
    make_plan(one_case({Op::allreduce}, parse_algos("rnig")), Registry::get());
    FAIL() << "rnig accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown algo 'rnig' for op allreduce (backend mpi) (did you mean ring?)"),
              std::string::npos)
        << e.what();
  }
  try {
    make_plan(one_case({Pingpong{}}, parse_algos("latncy")), Registry::get());
    FAIL() << "latncy accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("(did you mean latency?)"), std::string::npos) << e.what();
  }
}

TEST(Plan, AllResolvesToEveryAlgorithmOfTheOpWithLibraryLast) {
  const auto plan = make_plan(one_case({Op::allreduce}, parse_algos("all")), Registry::get());
  ASSERT_EQ(plan.size(), 1u);
  ASSERT_FALSE(coll(plan[0]).algos.empty());
  EXPECT_EQ(coll(plan[0]).algos.back()->algo, "library");
  EXPECT_EQ(coll(plan[0]).algos.size(), registered(Op::allreduce, false));  // no library:... variant
}

TEST(Plan, LibraryAllResolvesToTheLibrarysVariantsOnly) {
  const auto plan = make_plan(one_case({Op::allreduce}, parse_algos("ring,library:all")), Registry::get());
  const auto& algos = coll(plan[0]).algos;
  ASSERT_EQ(algos.size(), 1 + registered(Op::allreduce, true));
  EXPECT_EQ(algos.front()->algo, "ring");
  for (std::size_t i = 1; i < algos.size(); ++i) EXPECT_TRUE(algos[i]->algo.starts_with("library:")) << algos[i]->algo;
  EXPECT_NE(std::find_if(algos.begin(), algos.end(), [](const AlgoEntry* e) { return e->algo == "library:ring"; }),
            algos.end());
}

TEST(Plan, AllInAListAddsEveryAlgorithmOnceBesideTheNamedOnes) {
  const std::size_t every = registered(Op::allreduce, false);
  const auto first = make_plan(one_case({Op::allreduce}, parse_algos("ring,all")), Registry::get());
  ASSERT_EQ(coll(first[0]).algos.size(), every);  // ring once, where it was named
  EXPECT_EQ(coll(first[0]).algos.front()->algo, "ring");
  RunConfig cfg = one_case({Op::allreduce}, parse_algos("all,auto"));
  cfg.tuning_path = "tuning.yaml";  // not read by make_plan
  const auto with_auto = make_plan(cfg, Registry::get());
  ASSERT_EQ(coll(with_auto[0]).algos.size(), every + 1);  // "all,auto" used to drop auto
  EXPECT_EQ(coll(with_auto[0]).algos.back()->algo, "auto");
  EXPECT_EQ(parse_algos("all"), std::vector<std::string>{"all"});  // the config says ["all"]; [] is the default
}

TEST(Plan, UnknownAlgoListsTheValidOnes) {
  try {
    make_plan(one_case({Op::broadcast}, {"library", "nope"}), Registry::get());
    FAIL();
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown algo 'nope' for op broadcast"), std::string::npos) << m;
    EXPECT_NE(m.find("; accepted: "), std::string::npos) << m;
    EXPECT_NE(m.find("library"), std::string::npos) << m;
  }
}

TEST(Plan, BlocksPerDtypeRedopPlacementAndRootOnlyWhereItMeans) {
  Settings s;
  s.dtypes = {DType::float32, DType::int32};
  s.redops = {RedOp::sum, RedOp::max};
  s.placements = {false, true};
  s.root = 1;
  const auto plan = make_plan(one_case({Op::allreduce, Op::broadcast, Op::allgather}, {"library"}, s), Registry::get());
  ASSERT_EQ(plan.size(), 8u + 4u + 4u);
  EXPECT_TRUE(coll(plan[0]).redop.has_value());
  EXPECT_FALSE(coll(plan[0]).root.has_value());
  EXPECT_FALSE(coll(plan[8]).redop.has_value()) << "broadcast does not reduce";
  EXPECT_EQ(coll(plan[8]).root, 1);
  EXPECT_FALSE(coll(plan[12]).root.has_value());
  EXPECT_THROW(check_plan_for_world(plan, 1), UsageError);
  EXPECT_NO_THROW(check_plan_for_world(plan, 2));
  // One table per (op, dtype, redop): its two placements side by side, nothing else with them.
  const auto tables = table_ranges(plan);
  ASSERT_EQ(tables.size(), 4u + 2u + 2u);
  for (const TableRange& t : tables) {
    ASSERT_EQ(t.last - t.first, 2u);
    EXPECT_FALSE(coll(plan[t.first]).in_place);
    EXPECT_TRUE(coll(plan[t.first + 1]).in_place);
    EXPECT_EQ(coll(plan[t.first]).dtype, coll(plan[t.first + 1]).dtype);
    EXPECT_EQ(coll(plan[t.first]).redop, coll(plan[t.first + 1]).redop);
  }
}

TEST(Plan, TablesOfOtherBlocksAreOneBlockEach) {
  RunConfig cfg = one_case({Pingpong{}, Op::allreduce}, {});
  cfg.cases.push_back(cfg.cases.front());  // a second case of the same op: tables of its own
  const auto plan = make_plan(cfg, Registry::get());
  const auto tables = table_ranges(plan);
  ASSERT_EQ(tables.size(), plan.size());
  for (std::size_t i = 0; i < tables.size(); ++i) EXPECT_EQ(tables[i].first, i);
}

std::map<std::string, std::string> env_of(std::initializer_list<std::pair<const std::string, std::string>> kv) {
  return kv;
}

GetEnv getter(const std::map<std::string, std::string>& m) {
  return [&m](const char* n) -> const char* {
    auto it = m.find(n);
    return it == m.end() ? nullptr : it->second.c_str();
  };
}

TEST(LaunchEnv, SourcesInPriorityOrder) {
  auto m = env_of({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "2"}, {"SLURM_STEP_NUM_TASKS", "2"}});
  LaunchEnv e = read_launch_env(getter(m));
  EXPECT_EQ(e.size, 4);
  EXPECT_EQ(e.size_by, "OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(e.rank, 2);
  m = env_of({{"SLURM_STEP_NUM_TASKS", "6"}, {"SLURM_PROCID", "5"}, {"SLURM_STEP_ID", "0"}});
  e = read_launch_env(getter(m));
  EXPECT_EQ(e.size, 6);
  EXPECT_EQ(e.rank, 5);
}

TEST(LaunchEnv, BatchScriptAllocationIsNotAStep) {
  // sbatch -n 4 running ./collbench directly: SLURM_NTASKS describes the allocation only.
  auto m = env_of({{"SLURM_NTASKS", "4"}, {"SLURM_JOB_ID", "7"}});
  EXPECT_FALSE(read_launch_env(getter(m)).size);
  m = env_of({{"SLURM_NTASKS", "4"}, {"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "1"}});
  EXPECT_EQ(read_launch_env(getter(m)).size, 4);
}

TEST(LaunchEnv, SingletonTrapIsAnError) {
  auto m = env_of({{"SLURM_STEP_NUM_TASKS", "4"}, {"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "3"}});
  const LaunchEnv e = read_launch_env(getter(m));
  EXPECT_NO_THROW(check_world_size(e, 4, "mpi"));
  try {
    check_world_size(e, 1, "mpi");
    FAIL();
  } catch (const UsageError& err) {
    const std::string s = err.what();
    EXPECT_NE(s.find("started 4 ranks (SLURM_STEP_NUM_TASKS=4, set by srun)"), std::string::npos) << s;
    EXPECT_NE(s.find("world of 1"), std::string::npos) << s;
  }
  EXPECT_NO_THROW(check_world_size(LaunchEnv{}, 3, "mpi")) << "no launcher information: nothing to check";
}

// An MPICH build under Open MPI's mpirun (and the reverse): the line names the launcher, the
// build's MPI and how that MPI starts its ranks.
TEST(LaunchEnv, MismatchedMpiNamesBothSides) {
  auto m = env_of({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "0"}});
  try {
    check_world_size(read_launch_env(getter(m)), 1, "mpi", "MPICH Version:\t4.0.2");
    FAIL();
  } catch (const UsageError& err) {
    const std::string s = err.what();
    for (const char* part : {"(OMPI_COMM_WORLD_SIZE=2, set by Open MPI's mpirun)", "(MPICH Version: 4.0.2)",
                             "accepted: mpiexec.hydra -n N, or srun --mpi=pmi2"})
      EXPECT_NE(s.find(part), std::string::npos) << part << " not in: " << s;
    EXPECT_EQ(s.find('\n'), std::string::npos) << "one line: " << s;
  }
  m = env_of({{"PMI_SIZE", "3"}, {"PMI_RANK", "1"}});
  try {
    check_world_size(read_launch_env(getter(m)), 1, "mpi", "Open MPI v4.1.4, package: Debian OpenMPI");
    FAIL();
  } catch (const UsageError& err) {
    const std::string s = err.what();
    EXPECT_NE(s.find("set by a PMI launcher"), std::string::npos) << s;
    EXPECT_NE(s.find("accepted: mpirun -np N, or srun --mpi=pmix"), std::string::npos) << s;
  }
}

TEST(Slurm, JobVariablesOrNull) {
  auto none = env_of({});
  EXPECT_FALSE(slurm_info(getter(none)));
  auto m = env_of({{"SLURM_JOB_ID", "12"}, {"SLURM_JOB_NODELIST", "n[1-2]"}, {"SLURM_JOB_PARTITION", "debug"}});
  const auto s = slurm_info(getter(m));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->at("job_id"), "12");
  EXPECT_EQ(s->at("nodelist"), "n[1-2]");
  EXPECT_EQ(s->at("partition"), "debug");
  EXPECT_FALSE(s->count("job_name"));
}

TEST(Topology, NodesNumberedByFirstRankAndUnevenFlagged) {
  // Ranks 0,2 on one node (leader 0), ranks 1,3,4 on another (leader 1).
  const Topology t = topology_from({0, 1, 0, 1, 1}, {"b", "a", "b", "a", "a"}, 3);
  EXPECT_EQ(t.node_of_rank, (std::vector<int>{0, 1, 0, 1, 1}));
  EXPECT_EQ(t.nodes, 2);
  EXPECT_EQ(t.hosts, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(t.ranks_per_node, 3);
  EXPECT_TRUE(t.uneven);
  EXPECT_EQ(t.ranks_on_my_node, 3);
  const Topology even = topology_from({0, 0, 2, 2}, {"x", "x", "y", "y"}, 0);
  EXPECT_FALSE(even.uneven);
  EXPECT_EQ(even.ranks_per_node, 2);
}

}  // namespace
}  // namespace collbench
