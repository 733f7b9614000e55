#include "collectives/launch/launchers.hpp"

#include <charconv>
#include <stdexcept>

namespace collbench::launch {
namespace {

bool set(const GetEnv& env, const char* var) { return var && env(var); }

std::optional<int> int_of(const GetEnv& env, const char* var) {
  const char* v = var ? env(var) : nullptr;
  if (!v || !*v) return std::nullopt;
  int x = 0;
  const std::string_view s(v);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return x;
}

}  // namespace

const std::vector<Launcher>& launchers() {
  static const std::vector<Launcher> table = {
      {"mpirun", "Open MPI's mpirun", {"OMPI_COMM_WORLD_SIZE"}, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
       "OMPI_COMM_WORLD_LOCAL_SIZE", nullptr, nullptr, true,
       [](const GetEnv& e) { return set(e, "OMPI_COMM_WORLD_SIZE"); }},
      {"pmix", "a PMIx launcher (srun --mpi=pmix)", {}, "PMIX_RANK", nullptr, nullptr, nullptr, nullptr, true,
       [](const GetEnv& e) { return set(e, "PMIX_RANK"); }},
      {"pmi", "a PMI launcher (MPICH's mpiexec.hydra, srun --mpi=pmi2)", {"PMI_SIZE"}, "PMI_RANK", "MPI_LOCALRANKID",
       "MPI_LOCALNRANKS", nullptr, nullptr, true, [](const GetEnv& e) { return set(e, "PMI_SIZE"); }},
      {"spawn", "collbench --spawn", {"COLLBENCH_SPAWN_SIZE"}, "COLLBENCH_SPAWN_RANK", "COLLBENCH_SPAWN_RANK",
       "COLLBENCH_SPAWN_SIZE", "COLLBENCH_SPAWN_RENDEZVOUS", nullptr, false,
       [](const GetEnv& e) { return set(e, "COLLBENCH_SPAWN_RENDEZVOUS"); }},
      // A bare RANK is too common a name: torchrun's needs its agent's run id or the whole set.
      {"torchrun", "torchrun", {"WORLD_SIZE"}, "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
       false,
       [](const GetEnv& e) {
         return set(e, "TORCHELASTIC_RUN_ID") ||
                (set(e, "RANK") && set(e, "WORLD_SIZE") && set(e, "MASTER_ADDR") && set(e, "MASTER_PORT"));
       }},
      // SLURM_NTASKS alone also describes a batch script's allocation, where a plain
      // ./collbench is legitimately a singleton: only a step (SLURM_STEP_ID) started ranks.
      {"srun", "srun", {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS"}, "SLURM_PROCID", "SLURM_LOCALID",
       nullptr, "SLURM_STEP_NODELIST", nullptr, false,
       [](const GetEnv& e) {
         return set(e, "SLURM_STEP_ID") && set(e, "SLURM_PROCID") && !set(e, "OMPI_COMM_WORLD_SIZE") &&
                !set(e, "PMI_SIZE");
       }},
  };
  return table;
}

const Launcher& launcher(std::string_view name) {
  for (const Launcher& l : launchers())
    if (name == l.name) return l;
  throw std::logic_error("no launcher named " + std::string(name));
}

Declared declared(const GetEnv& env) {
  Declared d;
  for (const Launcher& l : launchers()) {
    if (!l.started(env)) continue;
    for (const char* var : l.size)
      if (!d.size)
        if (auto v = int_of(env, var)) d.size = v, d.size_by = var;
    if (!d.rank) d.rank = int_of(env, l.rank);
  }
  return d;
}

std::string_view who_sets(std::string_view var) {
  for (const Launcher& l : launchers())
    for (const char* v : {l.size[0], l.size[1], l.size[2], l.rank, l.local_rank, l.local_size, l.host, l.port})
      if (v && var == v) return l.who;
  return "the launcher";
}

bool started_by_mpi(const GetEnv& env) {
  for (const Launcher& l : launchers())
    if (l.mpi && l.started(env)) return true;
  return false;
}

std::string_view mpi_launch_hint(std::string_view mpi_library) {
  if (mpi_library.find("MPICH") != std::string_view::npos) return "mpiexec.hydra -n N, or srun --mpi=pmi2";
  if (mpi_library.find("Open MPI") != std::string_view::npos) return "mpirun -np N, or srun --mpi=pmix";
  return "mpirun -np N, or srun with the --mpi plugin this MPI was built for";
}

}  // namespace collbench::launch
