#include "collectives/launch/launch_env.hpp"

#include <charconv>
#include <cstring>

#include "collectives/core/error.hpp"

namespace collbench::launch {
namespace {

std::optional<long> number(const char* s) {
  if (!s || !*s) return std::nullopt;
  long v = 0;
  const char* end = s + std::strlen(s);
  auto [p, ec] = std::from_chars(s, end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

// A variable that must hold an integer in [lo, hi].
long required(const GetEnv& env, const char* var, long lo, long hi, const std::string& launcher) {
  const char* s = env(var);
  if (!s) throw UsageError(launcher + " started this process but " + std::string(var) + " is not set; accepted: start it with " + launcher);
  const auto v = number(s);
  if (!v || *v < lo || *v > hi)
    throw UsageError(std::string(var) + "='" + s + "': not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return *v;
}

long optional_int(const GetEnv& env, const char* var, long fallback, long lo, long hi) {
  const char* s = env(var);
  if (!s) return fallback;
  const auto v = number(s);
  if (!v || *v < lo || *v > hi)
    throw UsageError(std::string(var) + "='" + s + "': not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return *v;
}

constexpr long kMaxRanks = 1 << 16;

// COLLBENCH_RDZV_PORT, when set, wins over the derived port.
bool port_override(const GetEnv& env, Spec& s) {
  if (!env("COLLBENCH_RDZV_PORT")) return false;
  s.port = static_cast<int>(optional_int(env, "COLLBENCH_RDZV_PORT", 0, 1, 65535));
  s.port_from = "COLLBENCH_RDZV_PORT";
  return true;
}

}  // namespace

bool started_by_torchrun(const GetEnv& env) { return launcher("torchrun").started(env); }
bool started_by_srun(const GetEnv& env) { return launcher("srun").started(env); }
bool started_by_spawn(const GetEnv& env) { return launcher("spawn").started(env); }

namespace {

// The launcher's name, world size (from `size_var`) and rank: where every spec starts. `who`
// names the launcher in the error line.
Spec ranked(const GetEnv& env, const Launcher& l, const char* size_var, const std::string& who) {
  Spec s;
  s.launcher = l.name;
  s.size = static_cast<int>(required(env, size_var, 1, kMaxRanks, who));
  s.rank = static_cast<int>(required(env, l.rank, 0, s.size - 1, who));
  return s;
}

}  // namespace

Spec torchrun_spec(const GetEnv& env) {
  const Launcher& l = launcher("torchrun");
  Spec s = ranked(env, l, l.size[0], l.name);
  s.local_rank = static_cast<int>(optional_int(env, l.local_rank, 0, 0, s.size - 1));
  s.local_size = static_cast<int>(optional_int(env, l.local_size, 1, 1, s.size));
  const char* addr = env(l.host);
  if (!addr || !*addr)
    throw UsageError("torchrun started this process but " + std::string(l.host) + " is not set; accepted: start it with torchrun");
  s.host = addr;
  const long master_port = required(env, l.port, 1, 65535, s.launcher);
  // With the static rendezvous (the default), torchrun's agent serves its own TCPStore on
  // MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True): collbench's rendezvous takes the next port.
  // With --standalone / c10d (1.13) the agent chose MASTER_PORT free for the workers.
  const char* agent = env("TORCHELASTIC_USE_AGENT_STORE");
  const bool agent_store = agent && (std::strcmp(agent, "True") == 0 || std::strcmp(agent, "1") == 0 || std::strcmp(agent, "true") == 0);
  if (!port_override(env, s)) {
    if (agent_store && master_port == 65535) throw UsageError("MASTER_PORT=65535 leaves no port for collbench's rendezvous (it uses MASTER_PORT+1 beside torchrun's agent store); accepted: COLLBENCH_RDZV_PORT=PORT");
    s.port = static_cast<int>(master_port + (agent_store ? 1 : 0));
    s.port_from = agent_store ? "MASTER_PORT+1 (torchrun's agent store holds MASTER_PORT)" : "MASTER_PORT";
  }
  // A restart is a new rendezvous: ranks of the previous attempt are another job.
  const char* run_id = env("TORCHELASTIC_RUN_ID");
  const char* restart = env("TORCHELASTIC_RESTART_COUNT");
  s.job = std::string("torchrun:") + (run_id ? run_id : "none") + ":" + (restart ? restart : "0") + ":" + s.host + ":" + std::to_string(master_port);
  return s;
}

Spec srun_spec(const GetEnv& env) {
  const Launcher& l = launcher("srun");
  Spec s = ranked(env, l, env(l.size[0]) ? l.size[0] : l.size[1], l.name);
  s.local_rank = static_cast<int>(optional_int(env, l.local_rank, 0, 0, s.size - 1));
  const char* nodes = env(l.host) ? env(l.host) : env("SLURM_JOB_NODELIST");
  if (!nodes || !*nodes)
    throw UsageError("srun started this process but " + std::string(l.host) + " is not set; accepted: start it with srun");
  s.host = first_host(nodes);
  if (s.host.empty()) throw UsageError(std::string("SLURM_STEP_NODELIST='") + nodes + "': no host in it");
  const long job = required(env, "SLURM_JOB_ID", 0, 1L << 40, s.launcher);
  const long step = optional_int(env, "SLURM_STEP_ID", 0, 0, 1L << 40);
  if (!port_override(env, s)) {
    s.port = srun_port(job, step);
    s.port_from = "derived from SLURM_JOB_ID and SLURM_STEP_ID (set COLLBENCH_RDZV_PORT to choose)";
  }
  s.job = "slurm:" + std::to_string(job) + "." + std::to_string(step);
  return s;
}

Spec spawn_spec(const GetEnv& env) {
  const Launcher& l = launcher("spawn");
  Spec s = ranked(env, l, l.size[0], l.who);
  s.local_rank = s.rank;
  s.local_size = s.size;
  const std::string ep = env(l.host) ? env(l.host) : "";
  const auto colon = ep.rfind(':');
  const auto port = colon == std::string::npos ? std::nullopt : number(ep.c_str() + colon + 1);
  if (!port || *port < 1 || *port > 65535) throw UsageError(std::string(l.host) + "='" + ep + "': not HOST:PORT");
  s.host = ep.substr(0, colon);
  s.port = static_cast<int>(*port);
  s.port_from = l.host;
  const char* job = env(kSpawnJob);
  s.job = job ? job : "";
  return s;
}

std::string first_host(const std::string& list) {
  // The first entry ends at a comma outside brackets.
  std::size_t end = 0;
  for (int depth = 0; end < list.size(); ++end) {
    if (list[end] == '[') ++depth;
    else if (list[end] == ']') --depth;
    else if (list[end] == ',' && depth == 0) break;
  }
  std::string entry = list.substr(0, end);
  // Each bracket group ("n[1-3,7]", "rack[2]-n[4-5]") becomes its first value, zero padding kept.
  for (auto open = entry.find('['); open != std::string::npos; open = entry.find('[')) {
    const auto close = entry.find(']', open);
    if (close == std::string::npos) return "";
    const std::string range = entry.substr(open + 1, close - open - 1);
    entry = entry.substr(0, open) + range.substr(0, range.find_first_of(",-")) + entry.substr(close + 1);
  }
  return entry;
}

int srun_port(long job_id, long step_id) {
  const unsigned long mix = static_cast<unsigned long>(job_id) * 131u + static_cast<unsigned long>(step_id);
  return 20000 + static_cast<int>(mix % 20000u);
}

}  // namespace collbench::launch
