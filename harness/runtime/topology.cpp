#include "harness/runtime/topology.hpp"

#include <algorithm>
#include <charconv>

#include "collbench_version.hpp"
#include "collectives/core/error.hpp"
#include "collectives/launch/launchers.hpp"
#include "collectives/patterns/node_layout.hpp"
#include "harness/runtime/control.hpp"
#include "harness/runtime/control_call.hpp"

namespace collbench {
void check_world_size(const LaunchEnv& env, int world_size, std::string_view bootstrap, std::string_view mpi_library) {
  if (!env.size || *env.size == world_size) return;
  std::string library(mpi_library);  // "MPICH Version:\t4.0.2": one line reads it with a space
  std::replace(library.begin(), library.end(), '\t', ' ');
  const std::string started = "the launcher started " + std::to_string(*env.size) + " ranks (" +
                              env.size_by + "=" + std::to_string(*env.size) + ", set by " +
                              std::string(launch::who_sets(env.size_by)) + ")";
  if (bootstrap == "mpi") {
    const std::string built = library.empty() ? std::string("this collbench's MPI") : "this collbench's MPI (" + library + ")";
    throw UsageError(started + " but MPI sees a world of " + std::to_string(world_size) + ": MPI and launcher disagree, and " +
                     built + " runs each rank as a singleton (an MPICH build under Open MPI's mpirun, Open MPI under srun "
                     "without --mpi=pmix ...); accepted: " + std::string(launch::mpi_launch_hint(mpi_library)));
  }
  throw UsageError(started + " but the ranks that met through " + std::string(bootstrap.empty() ? "the bootstrap" : bootstrap) +
                   " form a world of " + std::to_string(world_size) +
                   ": two launchers' variables disagree; accepted: one launcher per job");
}

Versions versions() {
  Versions v;
  v.collbench = COLLBENCH_VERSION_STRING;
  v.git_commit = COLLBENCH_GIT_COMMIT;
  return v;
}

std::string Versions::fact(std::string_view key) const {
  for (const auto& [k, value] : facts)
    if (k == key) return std::holds_alternative<std::string>(value) ? std::get<std::string>(value) : std::to_string(std::get<std::int64_t>(value));
  return {};
}

std::optional<std::map<std::string, std::string>> slurm_info(const GetEnv& getenv_fn) {
  if (!getenv_fn("SLURM_JOB_ID")) return std::nullopt;
  static constexpr std::pair<const char*, const char*> kVars[] = {
      {"job_id", "SLURM_JOB_ID"},         {"job_name", "SLURM_JOB_NAME"},
      {"nodelist", "SLURM_JOB_NODELIST"}, {"nnodes", "SLURM_NNODES"},
      {"ntasks", "SLURM_NTASKS"},         {"ntasks_per_node", "SLURM_NTASKS_PER_NODE"},
      {"step_id", "SLURM_STEP_ID"},       {"cluster_name", "SLURM_CLUSTER_NAME"},
      {"partition", "SLURM_JOB_PARTITION"}};
  std::map<std::string, std::string> out;
  for (const auto& [key, var] : kVars)
    if (const char* v = getenv_fn(var)) out[key] = v;
  return out;
}

Topology topology_from(const std::vector<int>& leader_of_rank, const std::vector<std::string>& host_of_rank, int my_rank) {
  const patterns::NodeLayout layout(leader_of_rank);  // the leader's rank labels its node
  Topology t;
  t.world_size = layout.world_size();
  t.host_of_rank = host_of_rank;
  for (int r = 0; r < t.world_size; ++r) t.node_of_rank.push_back(layout.node_of(r));
  t.nodes = layout.nodes();
  t.ranks_per_node = layout.max_local_size();
  t.uneven = layout.uneven();
  t.ranks_on_my_node = layout.local_size(layout.node_of(my_rank));
  for (int node = 0; node < t.nodes; ++node) {
    const std::string& h = host_of_rank[static_cast<std::size_t>(layout.leader(node))];
    if (std::find(t.hosts.begin(), t.hosts.end(), h) == t.hosts.end()) t.hosts.push_back(h);
  }
  return t;
}

Topology discover_topology(Control& control) {
  World& world = control.world();
  const ControlCall call(control.scope(), control.rank(), world.describe(World::Call::topology));
  const int leader = world.node_leader();
  std::vector<int> leaders(static_cast<std::size_t>(control.size()));
  world.allgather(std::as_bytes(std::span(&leader, 1)), std::as_writable_bytes(std::span(leaders)));
  return topology_from(leaders, control.all_gather(world.host_name()), control.rank());
}

}  // namespace collbench
