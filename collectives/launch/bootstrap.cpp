// Starting without MPI: ranks launched by torchrun, by srun (no MPI plugin needed), or by
// collbench --spawn N itself meet through one rendezvous that rank 0 serves (rendezvous.hpp),
// swap their control mesh's addresses there, and get that mesh's World as their control plane.
// The rendezvous listens only until every rank has joined. docs/launching.md.
#include "collectives/launch/bootstrap.hpp"

#include <cstdio>
#include <cstdlib>

#include "collectives/backends/backend.hpp"
#include "collectives/launch/rendezvous.hpp"
#include "collectives/launch/spawn.hpp"

namespace collbench::launch {
namespace {

// The one mesh of this build (a process links at most one library that provides it).
const ControlMesh*& registered_mesh() {
  static const ControlMesh* mesh = nullptr;
  return mesh;
}

const char* getenv_fn(const char* n) { return std::getenv(n); }

const ControlMesh& mesh_or_refuse(const char* launcher) {
  if (const ControlMesh* m = control_mesh()) return *m;
  throw UsageError(std::string("ranks started by ") + launcher +
                   " meet over Gloo, and this collbench was built without it (Debian: libgloo-dev, then "
                   "rebuild); accepted: --backend mpi under mpirun -np N");
}

// Rank 0's listener, on the address the other ranks route to (all interfaces if unknown).
std::unique_ptr<rendezvous::Server> listen_for(const ControlMesh& mesh, const Spec& s) {
  try {
    return std::make_unique<rendezvous::Server>(mesh.listen_address(s.host), s.port);
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + " (rendezvous port: " + s.port_from + ")");
  }
}

// Meets the other ranks: the mesh's addresses are what each rank joins with.
std::unique_ptr<World> meet(const ControlMesh& mesh, const Spec& s, rendezvous::Server* server,
                            std::chrono::milliseconds timeout) {
  const auto deadline = rendezvous::Clock::now() + timeout;
  const Exchange exchange = [&](const std::vector<std::byte>& mine) {
    rendezvous::Join me{s.rank, s.size, s.job, mine};
    if (s.size == 1) return rendezvous::Table{me.blob};
    if (server)
      return server->serve(s.size, s.job, me, deadline,
                           [](const std::string& line) { std::fprintf(stderr, "collbench: rendezvous: %s\n", line.c_str()); });
    return rendezvous::join({s.host, s.port}, me, deadline);
  };
  return mesh.meet(s, exchange, timeout);
}

class EnvBootstrap final : public Bootstrap {
 public:
  using Read = Spec (*)(const GetEnv&);
  EnvBootstrap(const char* name, Read read, const BootstrapOptions& o, bool spawn_parent)
      : name_(name), read_(read), o_(o), spawn_parent_(spawn_parent) {}
  void describe(Facts& f) const override { f.emplace_back(kLauncherVersionKey, name_); }

  int run(int&, char**& argv, const RankMain& rank_main, const OnFailure& on_failure, int failed) override {
    Spec s;
    std::vector<pid_t> children;
    int status = failed;
    bool ok = false;
    try {
      const ControlMesh& mesh = mesh_or_refuse(name_);
      std::unique_ptr<rendezvous::Server> server;
      if (spawn_parent_) {
        s = {"spawn", 0, o_.ranks.value_or(1), 0, o_.ranks.value_or(1), "127.0.0.1", 0, "a free port", spawn_job()};
        if (s.size > 1) {
          server = std::make_unique<rendezvous::Server>("127.0.0.1", 0);
          s.port = server->port();
          children = spawn_ranks(argv, s);
        }
      } else {
        s = read_(getenv_fn);
        if (s.rank == 0 && s.size > 1) server = listen_for(mesh, s);
      }
      auto world = meet(mesh, s, server.get(), o_.timeout);
      server.reset();  // closed already: every rank joined
      status = rank_main(*world);
      ok = true;
    } catch (const rendezvous::Refused& e) {
      std::fprintf(stderr, "collbench: error: rank %d: %s\n", s.rank, e.what());
      status = o_.usage_status;
    } catch (const UsageError& e) {
      if (s.rank == 0) std::fprintf(stderr, "collbench: error: %s\n", e.what());
      status = o_.usage_status;
    } catch (const std::exception& e) {
      on_failure(s.rank, e.what());
      status = failed;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    if (!children.empty()) {
      const int child = reap(children, ok ? std::chrono::milliseconds(o_.timeout) : std::chrono::milliseconds(2000), !ok);
      if (status == 0 && child != 0) status = child;
    }
    return status;
  }

 private:
  const char* name_;
  Read read_;
  BootstrapOptions o_;
  bool spawn_parent_;
};

COLLBENCH_REGISTER_BACKEND(BootstrapInfo{
    "torchrun", "torchrun --no_python --nproc_per_node N collbench ...: RANK, WORLD_SIZE, MASTER_ADDR/PORT",
    [](const BootstrapOptions& o) -> std::unique_ptr<Bootstrap> { return std::make_unique<EnvBootstrap>("torchrun", torchrun_spec, o, false); },
    nullptr, [](const GetEnvFn& env) { return started_by_torchrun(env); }});

COLLBENCH_REGISTER_BACKEND(BootstrapInfo{
    "srun", "srun collbench ... (no MPI plugin needed): SLURM_PROCID, SLURM_STEP_NUM_TASKS, the step's first node",
    [](const BootstrapOptions& o) -> std::unique_ptr<Bootstrap> { return std::make_unique<EnvBootstrap>("srun", srun_spec, o, false); },
    nullptr, [](const GetEnvFn& env) { return started_by_srun(env); }});

COLLBENCH_REGISTER_BACKEND(BootstrapInfo{
    "spawn", "collbench --spawn N: this process is rank 0 and starts ranks 1..N-1 on this host (as mp.spawn)",
    [](const BootstrapOptions& o) -> std::unique_ptr<Bootstrap> {
      const bool child = started_by_spawn(getenv_fn);
      return std::make_unique<EnvBootstrap>("spawn", spawn_spec, o, !child);
    },
    [] { return 1; }, [](const GetEnvFn& env) { return started_by_spawn(env); }});

}  // namespace

ControlMeshRegistrar::ControlMeshRegistrar(ControlMesh m) {
  static const ControlMesh mesh = std::move(m);  // registered once per process, at load time
  registered_mesh() = &mesh;
}

const ControlMesh* control_mesh() { return registered_mesh(); }

}  // namespace collbench::launch
