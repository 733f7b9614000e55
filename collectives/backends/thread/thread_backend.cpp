// The thread backend: N ranks as threads of this one process (--ranks N), no launcher, no MPI:
// the teaching material's "fake distributed" world as a first-class mode. The control plane is
// a TransportWorld over a split of the thread world of its own; the measured transport is a
// ThreadTransport (rendezvous messages, plain-memory peer memory). It has no library of its
// own: "library" and "library:ALGO" are not entries for it.
//
// What is per process here is shared by every rank: peak RSS is the process's, signals, the
// watchdog's exit and the kill/stop test faults end all ranks at once, and one clock serves
// them all (clock offsets are 0).
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <thread>

#include "collectives/backends/backend.hpp"
#include "collectives/backends/thread/thread_transport.hpp"
#include "collectives/backends/transport_world.hpp"

namespace collbench {
namespace {

// The measured transport's ranks poll before they park, as MPI ranks do (thread_transport.hpp):
// without it a thread wake-up (tens of microseconds, jittery) is in every hand-off and clock-
// started samples start late.
constexpr std::chrono::milliseconds kMeasuredSpin{1};

class ThreadControlWorld final : public TransportWorld {
 public:
  ThreadControlWorld(Transport& control, ThreadWorld& threads) : TransportWorld(control), threads_(threads) {}
  ThreadWorld& threads() const { return threads_; }
  int node_leader() override { return 0; }  // one process: one node

 private:
  ThreadWorld& threads_;
};

class ThreadBootstrap final : public Bootstrap {
 public:
  explicit ThreadBootstrap(int ranks) : ranks_(ranks) {}
  int run(int&, char**&, const RankMain& rank_main, const OnFailure& on_failure, int failed) override {
    ThreadWorld world(ranks_);
    std::vector<int> status(static_cast<std::size_t>(ranks_), 0);
    std::mutex mu;
    int first_failed = -1;  // the rank whose own error ended the job (not a woken peer)
    try {
      world.run([&](ThreadTransport& t) {
        const int rank = t.rank();
        try {
          // A root of its own under a long scope, used only to split off the control plane's
          // mailboxes: control messages never match the measured transport's.
          ThreadTransport root(world, rank, std::make_shared<CallScope>(kControlTransportTimeout));
          ThreadControlWorld control(*root.split("collbench control", 0, rank), world);
          status[static_cast<std::size_t>(rank)] = rank_main(control);
        } catch (const PeerFailed&) {
          throw;
        } catch (...) {
          std::lock_guard lock(mu);
          if (first_failed < 0) first_failed = rank;
          throw;
        }
      });
    } catch (const std::exception& e) {
      on_failure(std::max(first_failed, 0), e.what());
      return failed;
    }
    return status.front();
  }
  void describe(Facts& f) const override { f.emplace_back(kLauncherVersionKey, "threads"); }

 private:
  int ranks_;
};

class ThreadBackend final : public Backend {
 public:
  explicit ThreadBackend(const BackendContext& ctx)
      : transport_(dynamic_cast<const ThreadControlWorld&>(ctx.world).threads(), ctx.world.rank(), ctx.scope) {
    transport_.set_spin(kMeasuredSpin);
  }
  Transport& transport() override { return transport_; }

 private:
  ThreadTransport transport_;
};

// One rank per online CPU (at least 2), as one rank per core under mpirun.
int default_ranks() { return static_cast<int>(std::max(2L, sysconf(_SC_NPROCESSORS_ONLN))); }

COLLBENCH_REGISTER_BACKEND(BootstrapInfo{
    "threads", "--ranks N threads of this one process (default: one per online CPU, at least 2); no launcher",
    [](const BootstrapOptions& o) -> std::unique_ptr<Bootstrap> {
      if (o.declared_size && *o.declared_size > 1)
        throw UsageError("--backend thread runs every rank as a thread of one process, but " + o.declared_by + "=" +
                         std::to_string(*o.declared_size) +
                         " says a launcher started several processes; accepted: start collbench once, without "
                         "mpirun/srun, with --ranks N");
      return std::make_unique<ThreadBootstrap>(o.ranks.value_or(default_ranks()));
    },
    default_ranks});

COLLBENCH_REGISTER_BACKEND(BackendInfo{
    "thread",
    "ranks as threads of one process (--ranks N), messages by rendezvous in shared memory; no MPI, no launcher",
    {"threads"},
    {"cpu"},
    {},
    true,
    nullptr,
    [](const BackendContext& ctx) -> std::unique_ptr<Backend> { return std::make_unique<ThreadBackend>(ctx); }});

}  // namespace
}  // namespace collbench
