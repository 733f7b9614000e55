#pragma once
// Facts about the run recorded with every result: which rank ran on which node, versions,
// the Slurm job; and the launch sanity check (Open MPI started by a mis-configured srun runs
// N singletons of world size 1 without complaint).
#include "collectives/backends/backend.hpp"
#include "collectives/launch/launchers.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

class Control;

using GetEnv = std::function<const char*(const char*)>;

// What the launcher said, read from the environment before the bootstrap runs: the launch
// component's own record (collectives/launch/launchers.hpp reads every launcher's variables).
using LaunchEnv = launch::Declared;
inline LaunchEnv read_launch_env(const GetEnv& getenv_fn) { return launch::declared(getenv_fn); }

// UsageError when the launcher declared another world size than the ranks that met through
// `bootstrap` (its BootstrapInfo name: "mpi", "torchrun", ...): one line naming the launcher
// (from the variable, collectives/launch/launchers.hpp) and, for the mpi bootstrap, how
// `mpi_library` (the run record's versions.mpi, e.g. "MPICH Version: 4.0.2"; may be empty)
// starts its ranks.
void check_world_size(const LaunchEnv& env, int world_size, std::string_view bootstrap, std::string_view mpi_library = {});

struct Versions {
  std::string collbench;
  std::string git_commit;  // short hash at configure time, "unknown" outside a git checkout
  // What the bootstrap, backend and device say (Bootstrap/Backend::describe): the MPI library's
  // first version line, NCCL's, CUDA's, the GPU, how device buffers move; keyed by
  // Backends::version_keys(), the run record's "versions" keys.
  Facts facts;
  // A fact's text, or "" when absent (the table's header).
  std::string fact(std::string_view key) const;
};
Versions versions();  // collbench's own; facts empty

// Slurm job variables when running in a Slurm job ("job_id", "nodelist", ...), else nothing.
std::optional<std::map<std::string, std::string>> slurm_info(const GetEnv& getenv_fn);

struct Topology {
  int world_size = 1;
  std::vector<std::string> host_of_rank;
  std::vector<int> node_of_rank;  // nodes numbered 0.. in order of their lowest rank
  std::vector<std::string> hosts;  // unique hostnames, in node order
  int nodes = 1;
  int ranks_per_node = 1;  // the most ranks on any node
  bool uneven = false;     // nodes hold different numbers of ranks
  int ranks_on_my_node = 1;
};

// Collective over `control`: nodes from the World's node leaders (MPI: MPI_Comm_split_type's
// shared-memory groups), host names from the World (MPI_Get_processor_name).
Topology discover_topology(Control& control);

// Pure: node numbering from each rank's shared-memory group leader (lowest world rank).
Topology topology_from(const std::vector<int>& leader_of_rank, const std::vector<std::string>& host_of_rank, int my_rank);

}  // namespace collbench
