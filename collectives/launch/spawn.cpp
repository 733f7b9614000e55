#include "collectives/launch/spawn.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "collectives/core/error.hpp"

extern char** environ;

namespace collbench::launch {
namespace {

// The parent's own spawn variables (a --spawn inside a spawned rank) are not passed on.
bool is_spawn_variable(const char* entry) { return std::strncmp(entry, "COLLBENCH_SPAWN_", 16) == 0; }

}  // namespace

std::vector<pid_t> spawn_ranks(char** argv, const Spec& s) {
  const Launcher& l = launcher("spawn");
  std::vector<pid_t> pids;
  const pid_t parent = getpid();
  for (int r = 1; r < s.size; ++r) {
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e)
      if (!is_spawn_variable(*e)) env_strings.emplace_back(*e);
    env_strings.push_back(std::string(l.rank) + "=" + std::to_string(r));
    env_strings.push_back(std::string(l.size[0]) + "=" + std::to_string(s.size));
    env_strings.push_back(std::string(l.host) + "=" + s.host + ":" + std::to_string(s.port));
    env_strings.push_back(std::string(kSpawnJob) + "=" + s.job);
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

}  // namespace collbench::launch
