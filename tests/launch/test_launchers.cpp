// The launchers' table (collectives/launch/launchers.hpp): which launcher started a process,
// the world size and rank it declares, who sets a variable, and docs/launching.md naming every
// variable the table reads.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "collectives/launch/launchers.hpp"
#include "env_of.hpp"

namespace collbench::launch {
namespace {

using testing::env_of;

TEST(Launchers, TheFirstLauncherThatStartedTheProcessDeclaresTheWorld) {
  // mpirun inside a Slurm step: Open MPI's variables win over the allocation's.
  Declared d = declared(env_of({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "2"},
                                {"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "0"}}));
  EXPECT_EQ(d.size, 4);
  EXPECT_EQ(d.size_by, "OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(d.rank, 2);
  // srun --mpi=pmix: PMIx names the rank, the step the size.
  d = declared(env_of({{"PMIX_RANK", "3"}, {"SLURM_STEP_NUM_TASKS", "6"}, {"SLURM_STEP_ID", "1"}, {"SLURM_PROCID", "3"}}));
  EXPECT_EQ(d.size, 6);
  EXPECT_EQ(d.size_by, "SLURM_STEP_NUM_TASKS");
  EXPECT_EQ(d.rank, 3);
  d = declared(env_of({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "n1"}, {"MASTER_PORT", "29500"}}));
  EXPECT_EQ(d.size, 2);
  EXPECT_EQ(d.rank, 1);
  // A bare RANK/WORLD_SIZE is not torchrun's, and a batch script's SLURM_NTASKS is no step.
  EXPECT_FALSE(declared(env_of({{"RANK", "1"}, {"WORLD_SIZE", "2"}})).size);
  EXPECT_FALSE(declared(env_of({{"SLURM_NTASKS", "4"}, {"SLURM_JOB_ID", "7"}})).size);
  // A malformed size is no declaration.
  EXPECT_FALSE(declared(env_of({{"OMPI_COMM_WORLD_SIZE", "four"}})).size);
}

TEST(Launchers, MpiLaunchersAreTheMpiBootstrapsAndTheRestAreNot) {
  EXPECT_TRUE(started_by_mpi(env_of({{"OMPI_COMM_WORLD_SIZE", "2"}})));
  EXPECT_TRUE(started_by_mpi(env_of({{"PMI_SIZE", "2"}})));
  EXPECT_TRUE(started_by_mpi(env_of({{"PMIX_RANK", "0"}})));
  EXPECT_FALSE(started_by_mpi(env_of({{"TORCHELASTIC_RUN_ID", "x"}, {"RANK", "0"}, {"WORLD_SIZE", "2"}})));
  EXPECT_FALSE(started_by_mpi(env_of({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "0"}})));
  EXPECT_TRUE(launcher("srun").started(env_of({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "0"}})));
  EXPECT_FALSE(launcher("srun").started(env_of({{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "0"}, {"PMI_SIZE", "2"}})))
      << "Hydra inside an allocation is Hydra's";
}

TEST(Launchers, WhoSetsAVariable) {
  EXPECT_EQ(who_sets("OMPI_COMM_WORLD_SIZE"), "Open MPI's mpirun");
  EXPECT_EQ(who_sets("SLURM_NTASKS"), "srun");
  EXPECT_EQ(who_sets("WORLD_SIZE"), "torchrun");
  EXPECT_EQ(who_sets("COLLBENCH_SPAWN_SIZE"), "collbench --spawn");
  EXPECT_NE(who_sets("PMI_SIZE").find("mpiexec.hydra"), std::string_view::npos);
  EXPECT_EQ(who_sets("SOMETHING_ELSE"), "the launcher");
  EXPECT_EQ(mpi_launch_hint("MPICH Version: 4.0.2"), "mpiexec.hydra -n N, or srun --mpi=pmi2");
  EXPECT_EQ(mpi_launch_hint("Open MPI v4.1.4"), "mpirun -np N, or srun --mpi=pmix");
}

// Users read the variables in docs/launching.md: every one the table reads is named there.
TEST(Launchers, TheDocsNameEveryVariable) {
  std::ifstream in(COLLBENCH_LAUNCHING_DOC);
  ASSERT_TRUE(in) << COLLBENCH_LAUNCHING_DOC;
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  for (const Launcher& l : launchers())
    for (const char* v : {l.size[0], l.size[1], l.size[2], l.rank, l.local_rank, l.local_size, l.host, l.port})
      if (v) {
        EXPECT_NE(doc.find(v), std::string::npos) << l.name << ": " << v << " is not in docs/launching.md";
      }
}

}  // namespace
}  // namespace collbench::launch
