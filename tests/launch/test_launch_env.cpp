// The launchers' environments, read without launching anything: which launcher started the
// process, rank/size/rendezvous from torchrun's, srun's and --spawn's variables, the derived
// ports, and one clear line for each missing or malformed variable.
#include <gtest/gtest.h>

#include <map>

#include "collectives/launch/launch_env.hpp"
#include "env_of.hpp"
#include "collectives/core/error.hpp"

namespace collbench::launch {
namespace {

using testing::env_of;

std::string usage_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

// What torchrun 1.13 sets for a worker with the default static rendezvous.
std::map<std::string, std::string> torchrun_static() {
  return {{"RANK", "1"},          {"WORLD_SIZE", "4"},        {"LOCAL_RANK", "1"},
          {"LOCAL_WORLD_SIZE", "2"}, {"GROUP_RANK", "0"},     {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", "29500"}, {"TORCHELASTIC_RUN_ID", "none"}, {"TORCHELASTIC_RESTART_COUNT", "0"},
          {"TORCHELASTIC_USE_AGENT_STORE", "True"}};
}

TEST(LaunchEnv, TorchrunStaticTakesThePortAfterTheAgentStore) {
  const Spec s = torchrun_spec(env_of(torchrun_static()));
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.size, 4);
  EXPECT_EQ(s.local_rank, 1);
  EXPECT_EQ(s.local_size, 2);
  EXPECT_EQ(s.host, "127.0.0.1");
  EXPECT_EQ(s.port, 29501);
  EXPECT_NE(s.port_from.find("MASTER_PORT+1"), std::string::npos);
  EXPECT_TRUE(started_by_torchrun(env_of(torchrun_static())));
}

TEST(LaunchEnv, TorchrunStandaloneUsesMasterPortAndARestartIsAnotherJob) {
  auto m = torchrun_static();
  m["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  const Spec a = torchrun_spec(env_of(m));
  EXPECT_EQ(a.port, 29500);
  m["TORCHELASTIC_RESTART_COUNT"] = "1";
  EXPECT_NE(torchrun_spec(env_of(m)).job, a.job);
  m["COLLBENCH_RDZV_PORT"] = "31000";
  EXPECT_EQ(torchrun_spec(env_of(m)).port, 31000);
}

TEST(LaunchEnv, TorchrunBadVariablesSayWhich) {
  auto m = torchrun_static();
  m["RANK"] = "4";
  EXPECT_NE(usage_text([&] { torchrun_spec(env_of(m)); }).find("RANK='4'"), std::string::npos);
  m = torchrun_static();
  m["WORLD_SIZE"] = "four";
  EXPECT_NE(usage_text([&] { torchrun_spec(env_of(m)); }).find("WORLD_SIZE='four'"), std::string::npos);
  m = torchrun_static();
  m.erase("MASTER_PORT");
  EXPECT_NE(usage_text([&] { torchrun_spec(env_of(m)); }).find("MASTER_PORT is not set"), std::string::npos);
  m = torchrun_static();
  m["COLLBENCH_RDZV_PORT"] = "70000";
  EXPECT_NE(usage_text([&] { torchrun_spec(env_of(m)); }).find("COLLBENCH_RDZV_PORT"), std::string::npos);
}

TEST(LaunchEnv, SrunMeetsOnTheStepsFirstNode) {
  const auto m = std::map<std::string, std::string>{{"SLURM_PROCID", "3"},         {"SLURM_STEP_NUM_TASKS", "4"},
                                                    {"SLURM_NTASKS", "8"},         {"SLURM_LOCALID", "1"},
                                                    {"SLURM_STEP_NODELIST", "n[2-3]"}, {"SLURM_JOB_ID", "41"},
                                                    {"SLURM_STEP_ID", "2"}};
  EXPECT_TRUE(started_by_srun(env_of(m)));
  const Spec s = srun_spec(env_of(m));
  EXPECT_EQ(s.rank, 3);
  EXPECT_EQ(s.size, 4);  // the step's, not the allocation's
  EXPECT_EQ(s.local_rank, 1);
  EXPECT_EQ(s.host, "n2");
  EXPECT_EQ(s.port, srun_port(41, 2));
  EXPECT_EQ(s.job, "slurm:41.2");
  EXPECT_NE(srun_port(41, 2), srun_port(41, 3));
  for (long j : {0L, 1L, 99999L, 1L << 32})
    for (long st : {0L, 4294967294L}) {
      EXPECT_GE(srun_port(j, st), 20000);
      EXPECT_LT(srun_port(j, st), 40000);
    }
}

TEST(LaunchEnv, MpirunInsideAnAllocationIsNotSrun) {
  const auto m = std::map<std::string, std::string>{{"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}};
  EXPECT_FALSE(started_by_srun(env_of(m)));
  EXPECT_FALSE(started_by_torchrun(env_of(m)));
  EXPECT_FALSE(started_by_spawn(env_of(m)));
}

TEST(LaunchEnv, SpawnedRanks) {
  const auto m = std::map<std::string, std::string>{{"COLLBENCH_SPAWN_RANK", "2"}, {"COLLBENCH_SPAWN_SIZE", "3"},
                                                    {"COLLBENCH_SPAWN_RENDEZVOUS", "127.0.0.1:40123"},
                                                    {"COLLBENCH_SPAWN_JOB", "spawn:1:2"}};
  EXPECT_TRUE(started_by_spawn(env_of(m)));
  const Spec s = spawn_spec(env_of(m));
  EXPECT_EQ(s.rank, 2);
  EXPECT_EQ(s.size, 3);
  EXPECT_EQ(s.host, "127.0.0.1");
  EXPECT_EQ(s.port, 40123);
  EXPECT_EQ(s.job, "spawn:1:2");
  auto bad = m;
  bad["COLLBENCH_SPAWN_RENDEZVOUS"] = "127.0.0.1";
  EXPECT_NE(usage_text([&] { spawn_spec(env_of(bad)); }).find("not HOST:PORT"), std::string::npos);
}

TEST(LaunchEnv, FirstHostOfASlurmHostList) {
  EXPECT_EQ(first_host("n1"), "n1");
  EXPECT_EQ(first_host("n[1-3,7],m2"), "n1");
  EXPECT_EQ(first_host("node[007-009]"), "node007");
  EXPECT_EQ(first_host("a,b"), "a");
  EXPECT_EQ(first_host("rack[2]-n[4-5]"), "rack2-n4");
  EXPECT_EQ(first_host("n[1-3"), "");
}

}  // namespace
}  // namespace collbench::launch
