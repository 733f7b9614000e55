#pragma once
// Pure: how a rank started without MPI finds the others, read from its launcher's environment:
// the rank, size and rank 0's address of its row in launchers.hpp, plus what makes each
// launcher's job distinct (torchrun: TORCHELASTIC_RUN_ID, TORCHELASTIC_RESTART_COUNT and
// TORCHELASTIC_USE_AGENT_STORE; srun: SLURM_JOB_ID, SLURM_STEP_ID; spawn: COLLBENCH_SPAWN_JOB).
// docs/launching.md says which variables each one reads. COLLBENCH_RDZV_PORT overrides the
// rendezvous port torchrun's and srun's ranks derive.
#include <functional>
#include <optional>
#include <string>

#include "collectives/launch/launchers.hpp"

namespace collbench::launch {

// The job identity --spawn gives the ranks it starts (their own rendezvous refuses others).
inline constexpr const char* kSpawnJob = "COLLBENCH_SPAWN_JOB";

struct Spec {
  std::string launcher;  // "torchrun", "srun", "spawn"
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  std::string host;      // the rendezvous host (rank 0's)
  int port = 0;
  std::string port_from;  // how the port was chosen, for error lines ("MASTER_PORT+1 (...)")
  std::string job;       // ranks of another job are refused
};

// Whether each launcher started this process (its variables are set).
bool started_by_torchrun(const GetEnv& env);
bool started_by_srun(const GetEnv& env);  // a Slurm step without an MPI launcher in between
bool started_by_spawn(const GetEnv& env);

// The spec, or a UsageError naming the variable that is missing or malformed.
Spec torchrun_spec(const GetEnv& env);
Spec srun_spec(const GetEnv& env);
Spec spawn_spec(const GetEnv& env);

// The first host of a Slurm host list: "n[1-3,7],m2" -> "n1", "node[007-009]" -> "node007".
std::string first_host(const std::string& hostlist);

// The port srun's ranks meet on when COLLBENCH_RDZV_PORT is not set: from the job and step
// ids, so two steps of one job (or two jobs on one node) do not collide, in [20000, 40000).
int srun_port(long job_id, long step_id);

}  // namespace collbench::launch
