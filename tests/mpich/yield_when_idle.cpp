// LD_PRELOAD shim for MPICH ch4:ucx on an oversubscribed machine (the CI's 2 cores, 3-5 ranks):
// a rank whose UCX worker made no progress for kIdlePolls polls in a row gives its core away
// (sched_yield), as Open MPI does by itself when oversubscribed (mpi_yield_when_idle). MPICH's
// own MPIR_CVAR_POLLS_BEFORE_YIELD is ch3-only, so ch4's progress loop spins: a rank waiting
// for a descheduled peer burns its whole time slice. Measured (2-vCPU AMD EPYC, MPICH 4.0.2,
// 2000 x 1 KiB MPI_Allreduce, 3 ranks): 16.7 s without, 0.024 s with.
// MPICH's progress loop polls UCX on every pass (intra-node messages go through its own shared
// memory, but ucp_worker_progress is still called), so this one symbol sees every idle pass.
// Only how an idle rank waits changes: correctness runs, never timings (the CI's MPICH stage).
#include <dlfcn.h>
#include <sched.h>

namespace {
using Progress = unsigned (*)(void*);
constexpr unsigned kIdlePolls = 64;
// Per thread: MPICH may progress from several threads; each yields on its own idle streak.
thread_local unsigned idle = 0;
}  // namespace

extern "C" unsigned ucp_worker_progress(void* worker) {
  static const auto real = reinterpret_cast<Progress>(dlsym(RTLD_NEXT, "ucp_worker_progress"));
  const unsigned events = real(worker);
  if (events) {
    idle = 0;
  } else if (++idle >= kIdlePolls) {
    idle = 0;
    sched_yield();
  }
  return events;
}
