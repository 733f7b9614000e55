#pragma once
// A backend is one folder under collectives/backends/ that registers itself here: its name,
// how its ranks start (a bootstrap), the devices it moves, the run-record facts it fills, and
// the factory of its measured transport. The harness, --help, --list and the results schema
// learn backends from this registry (tests/harness/test_facts.cpp checks the schema against
// it), so adding a backend is its folder, one line in collectives/backends/CMakeLists.txt and
// its name in the schema's backend enum (docs/backends.md).
//
//   bootstrap  how a process learns who it is and meets the others (MPI_Init; N threads of
//              this process; a launcher's environment: torchrun, srun, collbench --spawn)
//   World      the harness's control plane among those ranks (world.hpp)
//   Backend    one rank's measured transport (and what it says about itself)
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "collectives/backends/world.hpp"
#include "collectives/transport/transport.hpp"

namespace collbench {

// Facts for the run record's "versions" object: (key, value), a key declared by the backend,
// bootstrap or device that fills it (BackendInfo::version_keys, kDeviceVersionKeys).
using FactValue = std::variant<std::string, std::int64_t>;
using Facts = std::vector<std::pair<std::string, FactValue>>;

// The device keys every device backend may fill (backends/device.hpp fills them).
inline const std::vector<std::string> kDeviceVersionKeys = {"cuda", "cuda_driver", "gpu", "ranks_per_gpu"};
// The key every bootstrap fills: how the ranks started (its BootstrapInfo name).
inline constexpr const char* kLauncherVersionKey = "launcher";

// One rank's measured side: the transport and what owns it (communicator, streams, memory).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Transport& transport() = 0;
  // Adds the run record's facts about this backend and device (versions, transfer mode).
  virtual void describe(Facts&) const {}

  // --device cuda: the GPU's free bytes now (0 = unknown), how many ranks of this node share
  // it, and whether device buffers are staged through pinned host memory; for the per-point
  // memory check. Nothing on the CPU path.
  struct DeviceBudget {
    std::uint64_t free = 0;
    int ranks_per_device = 1;
    bool staged = false;
  };
  virtual std::optional<DeviceBudget> device_budget() const { return std::nullopt; }
};

// What a backend's factory gets: the rank's control plane (already bootstrapped), the device,
// the harness's call scope (watched), and where the rank sits on its node.
struct BackendContext {
  World& world;
  std::string device;  // "cpu" | "cuda"
  std::shared_ptr<CallScope> scope;
  int local_rank = 0;
  int local_size = 1;
  std::string host;
  std::vector<int> node_of_rank;  // every rank's node (0..), from the harness's topology
};

// How the ranks of one job start. run() calls rank_main once per rank this process hosts
// (one under MPI; N threads for the thread backend) with that rank's World, and returns the
// process's exit status (rank_main's; the harness makes every rank return rank 0's). A
// rank_main that throws ends the whole job: on_failure(rank, what) is called once, then every
// rank of the job stops (MPI_Abort; the other threads are woken) and run returns `failed`.
class Bootstrap {
 public:
  using RankMain = std::function<int(World&)>;
  using OnFailure = std::function<void(int rank, const char* what)>;
  virtual ~Bootstrap() = default;
  virtual int run(int& argc, char**& argv, const RankMain& rank_main, const OnFailure& on_failure, int failed) = 0;
  // Facts about the process's launch layer (the MPI library's version), for the run record.
  virtual void describe(Facts&) const {}
};

// What the command line asks of a bootstrap, and what the launcher's environment said.
struct BootstrapOptions {
  std::optional<int> ranks;          // --ranks N (threads) or --spawn N (processes)
  std::optional<int> declared_size;  // ranks the launcher started (SLURM_NTASKS, OMPI_COMM_WORLD_SIZE, ...)
  std::string declared_by;           // the variable that said so
  std::chrono::milliseconds timeout{CallScope::kDefaultTimeout};  // --timeout: how long ranks wait to meet
  int usage_status = 2;  // the exit status of bad input found while starting (the harness's ExitStatus::usage)
};

using GetEnvFn = std::function<const char*(const char*)>;

struct BootstrapInfo {
  std::string name;     // "mpi", "threads", "torchrun", "srun", "spawn"
  std::string summary;  // how ranks start, one line for --help
  std::function<std::unique_ptr<Bootstrap>(const BootstrapOptions&)> make;
  // The ranks it starts without --ranks, for a bootstrap that starts them itself (null: the
  // launcher decides). --dry-run plans for it.
  std::function<int()> default_ranks = nullptr;
  // Whether this process was started by its launcher (its variables are set); null: never
  // detected, only chosen (the backend's last bootstrap, or --launcher).
  std::function<bool(const GetEnvFn&)> detect = nullptr;
};

struct BackendInfo {
  std::string name;     // --backend NAME
  std::string summary;  // one line for --help / --list
  // The bootstraps its ranks can start with (BootstrapInfo names), in order of preference: the
  // first whose launcher started this process (BootstrapInfo::detect), else the last.
  std::vector<std::string> bootstraps;
  std::vector<std::string> devices;       // accepted --device values, the default first
  std::vector<std::string> version_keys;  // run-record "versions" keys it (or its bootstrap) fills
  // Ranks are threads of one process: per-process facts (peak RSS, signals, the watchdog's
  // exit, kill/stop faults) are the process's, and library settings that are process-global
  // cannot differ between ranks.
  bool ranks_share_process = false;
  // Why this build or machine cannot run it on `device` ("" when it can): one line for a
  // UsageError, without "collbench: error: ".
  std::function<std::string(std::string_view device)> unavailable;
  // The measured side of one rank. Collective over ctx.world.
  std::function<std::unique_ptr<Backend>(const BackendContext& ctx)> make;
  // The library it was built against, one line ("Open MPI v4.1.4 ..."), callable before its
  // bootstrap starts (collbench --version); null when it has none.
  std::function<std::string()> library_version = nullptr;
};

class Backends {
 public:
  static const Backends& get();
  static void add(BackendInfo b);
  static void add(BootstrapInfo b);

  const BackendInfo* find(std::string_view name) const;
  const BootstrapInfo* find_bootstrap(std::string_view name) const;
  const std::vector<BackendInfo>& all() const { return backends_; }  // sorted by name
  const std::vector<BootstrapInfo>& bootstraps() const { return bootstraps_; }
  std::string names() const;  // "mpi, nccl, thread"
  // Every "versions" key of the run record: "collbench", then every backend's and device's,
  // each once, in registration-independent (sorted) order.
  std::vector<std::string> version_keys() const;

  // Throws UsageError for a --launcher no bootstrap is named ("" is none: nothing to check). A
  // misspelt name is reported before whether the backend can run here.
  void check_launcher(std::string_view launcher) const;
  // Throws UsageError for an unknown backend or device, or one this build/machine cannot run.
  const BackendInfo& check(std::string_view backend, std::string_view device) const;
  // The bootstrap `b`'s ranks start with here: `launcher` when given (--launcher; UsageError if
  // `b` cannot start that way), else the first of b.bootstraps that detects its launcher,
  // else the last. A launcher detected that `b` cannot use, which started several processes
  // (`declared_size` > 1), is a UsageError too (torchrun starting --backend mpi would give N
  // singletons); one process of any launcher may run as the backend's own.
  const BootstrapInfo& bootstrap_for(const BackendInfo& b, std::string_view launcher, const GetEnvFn& getenv_fn,
                                     std::optional<int> declared_size = std::nullopt) const;

 private:
  static Backends& mutable_instance();
  std::vector<BackendInfo> backends_;
  std::vector<BootstrapInfo> bootstraps_;
};

struct BackendRegistrar {
  explicit BackendRegistrar(BackendInfo b) { Backends::add(std::move(b)); }
  explicit BackendRegistrar(BootstrapInfo b) { Backends::add(std::move(b)); }
};

#define CB_BACKEND_CONCAT_INNER(a, b) a##b
#define CB_BACKEND_CONCAT(a, b) CB_BACKEND_CONCAT_INNER(a, b)
// COLLBENCH_REGISTER_BACKEND(BackendInfo{...}); or (BootstrapInfo{...});
#define COLLBENCH_REGISTER_BACKEND(...) \
  static const ::collbench::BackendRegistrar CB_BACKEND_CONCAT(collbench_backend_, __LINE__)(__VA_ARGS__)

}  // namespace collbench
