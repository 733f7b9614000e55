#pragma once
// Every launcher collbench knows, in one table: the variables each sets in the processes it
// starts (world size, rank, local rank and size, where rank 0 is) and which of them say that it
// started this process. The harness's world-size check, the bootstraps' detection and the
// non-MPI launchers' rendezvous specs (launch_env.hpp) all read the launchers from here.
// docs/launching.md lists the same variables for users.
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collbench::launch {

using GetEnv = std::function<const char*(const char*)>;

struct Launcher {
  const char* name;  // "mpirun", "pmix", "pmi", "spawn", "torchrun", "srun"
  const char* who;   // who sets these variables, for messages ("Open MPI's mpirun")
  std::array<const char*, 3> size;  // the world size: the first set wins (nullptr: unused)
  const char* rank;
  const char* local_rank;  // nullptr: the launcher sets none
  const char* local_size;
  const char* host;  // where rank 0 is: an address, a Slurm node list or HOST:PORT
  const char* port;
  bool mpi;  // an MPI launcher: MPI_Init meets its ranks
  // Its variables say it started this process.
  bool (*started)(const GetEnv& env);
};

// In priority order: the MPI launchers first (mpirun and Hydra leave a Slurm allocation's
// variables in place), then collbench --spawn, torchrun, and a bare srun step.
const std::vector<Launcher>& launchers();
// The row named `name` (one of the names above; anything else is a programming error).
const Launcher& launcher(std::string_view name);

// What the launchers' variables say before any bootstrap runs.
struct Declared {
  std::optional<int> size;  // ranks the launcher started
  std::string size_by;      // the variable it came from, e.g. "SLURM_STEP_NUM_TASKS"
  std::optional<int> rank;  // this process's rank according to the launcher
};
// From the first launcher (in table order) that started this process and sets each value.
Declared declared(const GetEnv& env);

// Who sets `var` ("Open MPI's mpirun", "srun"), "the launcher" for a variable of no row.
std::string_view who_sets(std::string_view var);

// An MPI launcher (mpirun, Hydra, srun with an MPI plugin) started this process.
bool started_by_mpi(const GetEnv& env);

// How the MPI named by its library version string ("Open MPI v4.1.4", "MPICH Version: 4.0.2")
// starts its ranks, for an "accepted:" hint.
std::string_view mpi_launch_hint(std::string_view mpi_library);

}  // namespace collbench::launch
