#include "harness/runtime/topology.hpp"

#include <algorithm>
#include <charconv>

#include "collbench_version.hpp"
#include "collectives/core/error.hpp"
#include "collectives/patterns/node_layout.hpp"
#include "harness/runtime/control.hpp"
#include "harness/runtime/control_call.hpp"

namespace collbench {
namespace {

std::optional<int> env_int(const GetEnv& getenv_fn, const char* name) {
  const char* v = getenv_fn(name);
  if (!v || !*v) return std::nullopt;
  int x = 0;
  const std::string_view s(v);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return x;
}

}  // namespace

LaunchEnv read_launch_env(const GetEnv& getenv_fn) {
  LaunchEnv e;
  // mpirun (Open MPI) and Hydra (MPICH) say it directly. A Slurm step says it in
  // SLURM_STEP_NUM_TASKS; SLURM_NTASKS alone also describes a batch script's allocation, where
  // a plain `./collbench` is legitimately a singleton, so it only counts inside a step.
  const bool in_step = getenv_fn("SLURM_STEP_ID") && getenv_fn("SLURM_PROCID");
  struct Source {
    const char* var;
    bool usable;
  };
  // torchrun says it in WORLD_SIZE (only with its MASTER_ADDR: a bare RANK is too common a
  // name); collbench --spawn's ranks in COLLBENCH_SPAWN_SIZE.
  const bool torchrun = getenv_fn("MASTER_ADDR") && getenv_fn("MASTER_PORT");
  const Source sources[] = {{"OMPI_COMM_WORLD_SIZE", true},
                            {"PMI_SIZE", true},
                            {"COLLBENCH_SPAWN_SIZE", true},
                            {"WORLD_SIZE", torchrun},
                            {"SLURM_STEP_NUM_TASKS", true},
                            {"SLURM_NTASKS", in_step},
                            {"SLURM_NPROCS", in_step}};
  for (const auto& s : sources) {
    if (!s.usable) continue;
    if (auto v = env_int(getenv_fn, s.var)) {
      e.declared_size = v;
      e.declared_by = s.var;
      break;
    }
  }
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "COLLBENCH_SPAWN_RANK", torchrun ? "RANK" : "",
                          "SLURM_PROCID"})
    if (auto v = *var ? env_int(getenv_fn, var) : std::nullopt) {
      e.rank = v;
      break;
    }
  return e;
}

namespace {

// Who sets a launcher variable (read_launch_env's sources).
std::string_view launcher_named_by(std::string_view var) {
  if (var == "OMPI_COMM_WORLD_SIZE") return "Open MPI's mpirun";
  if (var == "PMI_SIZE") return "a PMI launcher (MPICH's mpiexec.hydra, srun --mpi=pmi2)";
  if (var == "COLLBENCH_SPAWN_SIZE") return "collbench --spawn";
  if (var == "WORLD_SIZE") return "torchrun";
  if (var.starts_with("SLURM_")) return "srun";
  return "the launcher";
}

// How the MPI named by its library version string starts its ranks.
std::string_view launch_of_library(std::string_view mpi_library) {
  if (mpi_library.find("MPICH") != std::string_view::npos) return "mpiexec.hydra -n N, or srun --mpi=pmi2";
  if (mpi_library.find("Open MPI") != std::string_view::npos) return "mpirun -np N, or srun --mpi=pmix";
  return "mpirun -np N, or srun with the --mpi plugin this MPI was built for";
}

}  // namespace

void check_world_size(const LaunchEnv& env, int world_size, std::string_view mpi_library) {
  if (!env.declared_size || *env.declared_size == world_size) return;
  std::string library(mpi_library);  // "MPICH Version:\t4.0.2": one line reads it with a space
  std::replace(library.begin(), library.end(), '\t', ' ');
  const std::string built = library.empty() ? std::string("this collbench's MPI") : "this collbench's MPI (" + library + ")";
  throw UsageError("the launcher started " + std::to_string(*env.declared_size) + " ranks (" + env.declared_by + "=" +
                   std::to_string(*env.declared_size) + ", set by " + std::string(launcher_named_by(env.declared_by)) +
                   ") but MPI sees a world of " + std::to_string(world_size) + ": MPI and launcher disagree, and " +
                   built + " runs each rank as a singleton (an MPICH build under Open MPI's mpirun, Open MPI under srun "
                   "without --mpi=pmix ...); accepted: " + std::string(launch_of_library(mpi_library)));
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
