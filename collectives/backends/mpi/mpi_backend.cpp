// The MPI backend: ranks are MPI processes (mpirun, or srun --mpi=pmix), the control plane is
// MPI (mpi_world), the measured transport is MPI point-to-point on its own communicator (on
// device memory: CUDA-aware or staged, mpi_device), and the library entries are MPI's
// collectives (mpi_library, mpi_tuned). Also the bootstrap of every backend that starts its
// ranks with MPI_Init (nccl).
#include <dlfcn.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "collectives/backends/backend.hpp"
#include "collectives/launch/launchers.hpp"
#include "collectives/backends/device.hpp"
#include "collectives/backends/mpi/finalize_guard.hpp"
#include "collectives/backends/mpi/mpi_device.hpp"
#include "collectives/backends/mpi/mpi_ompi_vars.hpp"
#include "collectives/backends/mpi/mpi_transport.hpp"
#include "collectives/backends/mpi/mpi_world.hpp"
#include "collectives/backends/mpi/quiet_comm.hpp"

namespace collbench {
namespace {

// How long MPI_Finalize may take once the run has ended: well beyond what it takes (under 1 s here,
// seconds on large jobs), far below a Slurm step's time limit.
constexpr std::chrono::seconds kFinalizeLimit{30};

// MPI_Get_library_version (callable before MPI_Init) in full, without the padding some MPIs
// leave; "" if it fails.
std::string library_version_full() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (MPI_Get_library_version(buf, &len) != MPI_SUCCESS) return "";
  std::string v(buf, static_cast<std::size_t>(len));
  while (!v.empty() && (v.back() == ' ' || v.back() == '\0' || v.back() == ',' || v.back() == '\n')) v.pop_back();
  return v;
}

// Its first line: the short name the tables show ("Open MPI v4.1.4, ...", "MPICH Version: 4.0.2").
std::string library_version() {
  std::string v = library_version_full();
  v = v.substr(0, v.find('\n'));
  while (!v.empty() && (v.back() == ' ' || v.back() == ',')) v.pop_back();
  return v;
}

// The file whose MPI_Allreduce this process calls when it is not the MPI library's own: a PMPI
// tool preloaded or linked in (libcollbench-pmpi.so, docs/preload.md; mpiP ...), which then
// intercepts the harness's MPI calls too, its library entries included. "" when none.
std::string mpi_interposer() {
  Dl_info called{}, library{};
  if (!dladdr(reinterpret_cast<void*>(&MPI_Allreduce), &called) ||
      !dladdr(reinterpret_cast<void*>(&PMPI_Allreduce), &library) || !called.dli_fname || !library.dli_fname)
    return "";
  return std::strcmp(called.dli_fname, library.dli_fname) == 0 ? "" : called.dli_fname;
}

class MpiBootstrap final : public Bootstrap {
 public:
  int run(int& argc, char**& argv, const RankMain& rank_main, const OnFailure& on_failure, int failed) override {
    int provided = 0;
    // MPI_THREAD_SINGLE, what MPI_Init (and so the reference tools: OSU, a plain MPI loop)
    // gives: Open MPI 4.1 takes a mutex in every send, receive and progress step, and waits
    // through its multi-threaded completion path, at any level above SINGLE — measured on this
    // machine, collbench's 8 B library allreduce (--batch) 0.31 -> 0.19 us, pingpong latency
    // 0.175 -> 0.140 us, pingpong bw at 8 B 0.105 -> 0.058 us per message (FUNNELED -> SINGLE,
    // same binary, interleaved runs). Only this thread calls MPI; the harness's helper threads
    // (signal watcher, watchdog) never do, and only read atomics.
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int status = 0;
    try {
      MpiWorld world(MPI_COMM_WORLD);
      status = rank_main(world);
    } catch (const std::exception& e) {
      on_failure(rank, e.what());
      std::fflush(stderr);
      std::fflush(stdout);
      MPI_Abort(MPI_COMM_WORLD, failed);
      return failed;
    }
    // Every record is written by now: a rank stuck in MPI_Finalize (MPICH 4.0.2 over UCX across
    // nodes, finalize_guard.hpp) ends after kFinalizeLimit with the run's status, saying so.
    std::fflush(stdout);
    const FinalizeGuard guard(kFinalizeLimit, [rank, status] {
      std::fprintf(stderr,
                   "collbench: warning: rank %d: MPI_Finalize has not returned %lld s after the run ended with every "
                   "result written; exiting (MPICH 4.0.2 over UCX does this across nodes: pmodels/mpich#6596)\n",
                   rank, static_cast<long long>(kFinalizeLimit.count()));
      std::fflush(stderr);
      std::_Exit(status);
    });
    MPI_Finalize();
    return status;
  }
  void describe(Facts& f) const override {
    f.emplace_back(kLauncherVersionKey, "mpi");
    if (std::string v = library_version(); !v.empty()) f.emplace_back("mpi", v);
    if (std::string v = library_version_full(); !v.empty()) f.emplace_back("mpi_library", v);
    if (std::string v = mpi_interposer(); !v.empty()) f.emplace_back("mpi_preload", v);
  }
};

// An Open MPI coll/tuned rules file (colltune writes them: docs/library-tuning.md) decides before
// coll_tuned_<op>_algorithm in 4.1, so library:ALGO would record the file's algorithm under its own
// name and `library` the file's choice as Open MPI's: refused, alike on every rank (one launch).
void refuse_dynamic_rules_file() {
  const auto file = ompi::cvar_text("coll_tuned_dynamic_rules_filename");
  if (!file || file->empty() || ompi::cvar_text("coll_tuned_use_dynamic_rules") != "true") return;
  throw UsageError("Open MPI's coll/tuned rules file " + *file +
                   " is loaded (coll_tuned_use_dynamic_rules, coll_tuned_dynamic_rules_filename): it overrides "
                   "the algorithms collbench forces and measures; unset OMPI_MCA_coll_tuned_dynamic_rules_filename "
                   "(or drop that --mca) to measure");
}

// MPI point-to-point on a duplicated communicator, so algorithm traffic is isolated from the
// harness's control messages and from MPI library collectives of other communicators.
// When destroyed by an exception (a timeout, a dead peer), it deliberately leaves the
// communicator and its pending requests alone: the job is about to be aborted, and tearing
// down a failed communication layer can block.
class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(const BackendContext& ctx) {
    refuse_dynamic_rules_file();
    const auto& world = dynamic_cast<const MpiWorld&>(ctx.world);  // bootstrap "mpi" made it
    COLLBENCH_MPI_CHECK(mpi::quiet_dup(world.parent(), &comm_), nullptr);
    if (ctx.device == "cuda") {
      device_ = std::make_unique<DeviceSide>(ctx, /*exclusive=*/false);
      mpi_ = std::make_unique<MpiTransport>(comm_, ctx.scope);
      device_transport_ = mpi::make_device_transport(*mpi_, device_->memory());
      transfer_ = mpi::is_cuda_aware() ? "cuda-aware" : "staged";
    } else {
      mpi_ = std::make_unique<MpiTransport>(comm_, ctx.scope);
    }
  }
  ~MpiBackend() override {
    if (std::uncaught_exceptions() > 0) {
      (void)device_transport_.release();
      (void)mpi_.release();
      if (device_) device_->leak();
      (void)device_.release();
      return;
    }
    device_transport_.reset();  // transports before the memory they use
    mpi_.reset();
    device_.reset();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  Transport& transport() override { return device_transport_ ? *device_transport_ : *mpi_; }
  void describe(Facts& f) const override {
    if (!device_) return;
    device_->describe(f);
    f.emplace_back("device_transfer", transfer_);
  }
  std::optional<DeviceBudget> device_budget() const override {
    if (!device_) return std::nullopt;
    return device_->budget(transfer_ == "staged");
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::unique_ptr<DeviceSide> device_;
  std::unique_ptr<MpiTransport> mpi_;                // under the device transport on --device cuda
  std::unique_ptr<Transport> device_transport_;
  std::string transfer_;
};

COLLBENCH_REGISTER_BACKEND(BootstrapInfo{
    "mpi", "MPI_Init: ranks started by mpirun / mpiexec / srun --mpi=pmix",
    [](const BootstrapOptions&) -> std::unique_ptr<Bootstrap> { return std::make_unique<MpiBootstrap>(); },
    nullptr,
    // mpirun / mpiexec (Open MPI, Hydra) and srun with an MPI plugin (PMIx) say so.
    [](const GetEnvFn& env) { return launch::started_by_mpi(env); }});

COLLBENCH_REGISTER_BACKEND(BackendInfo{
    "mpi",
    "MPI point-to-point (isend/irecv) and MPI's own collectives; host or device memory (staged or CUDA-aware)",
    {"mpi"},
    {"cpu", "cuda"},
    {"mpi", "mpi_library", "device_transfer", "mpi_preload"},
    false,
    [](std::string_view device) { return device == "cuda" ? cuda_unavailable() : std::string(); },
    [](const BackendContext& ctx) -> std::unique_ptr<Backend> { return std::make_unique<MpiBackend>(ctx); },
    library_version});

}  // namespace
}  // namespace collbench
