// Starting without MPI: ranks launched by torchrun, by srun (no MPI plugin needed), or by
// collbench --spawn N itself meet through one rendezvous that rank 0 serves (rendezvous.hpp),
// swap their Gloo pair addresses there, and get a GlooWorld (gloo_world.hpp) as their control
// plane. The rendezvous listens only until every rank has joined. docs/launching.md.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "collectives/backends/backend.hpp"
#include "collectives/backends/gloo/gloo_mesh.hpp"
#include "collectives/backends/gloo/gloo_world.hpp"
#include "collectives/backends/gloo/launch_env.hpp"
#include "collectives/backends/gloo/rendezvous.hpp"

extern char** environ;

namespace collbench {
namespace {

const char* getenv_fn(const char* n) { return std::getenv(n); }

std::vector<char> to_chars(const std::vector<std::byte>& b) {
  std::vector<char> c(b.size());
  std::memcpy(c.data(), b.data(), b.size());
  return c;
}

std::vector<std::byte> to_bytes(const std::vector<char>& c) {
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

// Rank 0's listener, on the address the other ranks route to (all interfaces if unknown).
std::unique_ptr<rendezvous::Server> listen_for(const launch::Spec& s) {
  const std::string bind = gloo_mesh::route_source(s.host);
  try {
    return std::make_unique<rendezvous::Server>(bind, s.port);
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + " (rendezvous port: " + s.port_from + ")");
  }
}

// Meets the other ranks: the control context's pair addresses are what each rank joins with.
std::unique_ptr<GlooWorld> meet(const launch::Spec& s, rendezvous::Server* server, std::chrono::milliseconds timeout) {
  auto d = gloo_mesh::make_device(s.host, std::getenv("GLOO_SOCKET_IFNAME"));
  const auto deadline = rendezvous::Clock::now() + timeout;
  auto exchange = [&](const std::vector<char>& mine) {
    rendezvous::Join me{s.rank, s.size, s.job, to_bytes(mine)};
    std::vector<std::vector<std::byte>> table;
    if (s.size == 1) table = {me.blob};
    else if (server)
      table = server->serve(s.size, s.job, me, deadline,
                            [](const std::string& line) { std::fprintf(stderr, "collbench: rendezvous: %s\n", line.c_str()); });
    else table = rendezvous::join({s.host, s.port}, me, deadline);
    std::vector<std::vector<char>> out;
    for (const auto& b : table) out.push_back(to_chars(b));
    return out;
  };
  auto context = gloo_mesh::connect(s.rank, s.size, d.device, exchange, timeout);
  auto scope = std::make_shared<CallScope>(kControlTransportTimeout);
  auto control = std::make_unique<GlooTransport>(std::move(context), d.device, std::move(scope));
  return std::make_unique<GlooWorld>(std::move(control), d.device, d.address, d.why);
}

// The ranks --spawn starts: this program again, with the spawn variables; each dies with its
// parent (rank 0), as mp.spawn's children do.
std::vector<pid_t> spawn_ranks(char** argv, const launch::Spec& s) {
  std::vector<pid_t> pids;
  const pid_t parent = getpid();
  for (int r = 1; r < s.size; ++r) {
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "COLLBENCH_SPAWN_", 16) != 0) env_strings.emplace_back(*e);
    env_strings.push_back("COLLBENCH_SPAWN_RANK=" + std::to_string(r));
    env_strings.push_back("COLLBENCH_SPAWN_SIZE=" + std::to_string(s.size));
    env_strings.push_back("COLLBENCH_SPAWN_RENDEZVOUS=" + s.host + ":" + std::to_string(s.port));
    env_strings.push_back("COLLBENCH_SPAWN_JOB=" + s.job);
    std::vector<char*> envp;
    for (auto& x : env_strings) envp.push_back(x.data());
    envp.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw Error(std::string("--spawn: fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent) _exit(143);  // the parent died before the line above
      execve("/proc/self/exe", argv, envp.data());
      std::fprintf(stderr, "collbench: error: --spawn: cannot start rank %d: %s\n", r, std::strerror(errno));
      _exit(127);
    }
    pids.push_back(pid);
  }
  return pids;
}

// Waits for the spawned ranks (they end with rank 0: the harness agrees on the end); any
// still running after `grace` is stopped. Returns the first failed status, 0 if none.
int reap(const std::vector<pid_t>& pids, std::chrono::milliseconds grace, bool stop_now) {
  int first_failed = 0;
  const auto until = std::chrono::steady_clock::now() + grace;
  std::vector<bool> done(pids.size(), false);
  if (stop_now)
    for (pid_t p : pids) kill(p, SIGTERM);
  for (std::size_t left = pids.size(); left > 0;) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      int st = 0;
      if (waitpid(pids[i], &st, WNOHANG) != pids[i]) continue;
      done[i] = true;
      --left;
      const int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      if (code != 0 && first_failed == 0) first_failed = code;
      // A rank killed by a signal prints nothing itself (as mp.spawn says "process 1 terminated
      // with signal SIGKILL"); the SIGTERM sent just above is ours, not news.
      if (WIFSIGNALED(st) && !(stop_now && WTERMSIG(st) == SIGTERM))
        std::fprintf(stderr, "collbench: error: rank %zu (pid %d) was killed by signal %d (%s)\n", i + 1,
                     static_cast<int>(pids[i]), WTERMSIG(st), strsignal(WTERMSIG(st)));
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() > until) {
      for (std::size_t i = 0; i < pids.size(); ++i)
        if (!done[i]) kill(pids[i], SIGKILL), waitpid(pids[i], nullptr, 0);
      return first_failed ? first_failed : 137;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return first_failed;
}

std::string spawn_job() {
  std::random_device rd;
  return "spawn:" + std::to_string(getpid()) + ":" + std::to_string(rd());
}

class EnvBootstrap final : public Bootstrap {
 public:
  using Read = launch::Spec (*)(const launch::GetEnv&);
  EnvBootstrap(const char* name, Read read, const BootstrapOptions& o, bool spawn_parent)
      : name_(name), read_(read), o_(o), spawn_parent_(spawn_parent) {}
  void describe(Facts& f) const override { f.emplace_back(kLauncherVersionKey, name_); }

  int run(int&, char**& argv, const RankMain& rank_main, const OnFailure& on_failure, int failed) override {
    launch::Spec s;
    std::vector<pid_t> children;
    int status = failed;
    bool ok = false;
    try {
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
        if (s.rank == 0 && s.size > 1) server = listen_for(s);
      }
      auto world = meet(s, server.get(), o_.timeout);
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
    [](const BootstrapOptions& o) -> std::unique_ptr<Bootstrap> { return std::make_unique<EnvBootstrap>("torchrun", launch::torchrun_spec, o, false); },
    nullptr, [](const GetEnvFn& env) { return launch::started_by_torchrun(env); }});

COLLBENCH_REGISTER_BACKEND(BootstrapInfo{
    "srun", "srun collbench ... (no MPI plugin needed): SLURM_PROCID, SLURM_STEP_NUM_TASKS, the step's first node",
    [](const BootstrapOptions& o) -> std::unique_ptr<Bootstrap> { return std::make_unique<EnvBootstrap>("srun", launch::srun_spec, o, false); },
    nullptr, [](const GetEnvFn& env) { return launch::started_by_srun(env); }});

COLLBENCH_REGISTER_BACKEND(BootstrapInfo{
    "spawn", "collbench --spawn N: this process is rank 0 and starts ranks 1..N-1 on this host (as mp.spawn)",
    [](const BootstrapOptions& o) -> std::unique_ptr<Bootstrap> {
      const bool child = launch::started_by_spawn(getenv_fn);
      return std::make_unique<EnvBootstrap>("spawn", launch::spawn_spec, o, !child);
    },
    [] { return 1; }, [](const GetEnvFn& env) { return launch::started_by_spawn(env); }});

}  // namespace
}  // namespace collbench
