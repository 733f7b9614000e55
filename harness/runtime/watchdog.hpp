#pragma once
// The watchdog: one thread per process that bounds every blocking call the measured
// transport makes, so the timed path needs no clock (as PyTorch's NCCL watchdog does).
//
// The transports publish each blocking call on their CallScope with a few plain stores
// (BlockingCall: a begin counter, depth, the message waited for, the timeout; no clock). The
// watchdog wakes every tick (timeout / 8, clamped to [1 ms, 100 ms]) and reads those atomics:
// a call that is still running and has not been followed by another one (the begin counter is
// unchanged) for longer than its timeout is stuck. It then prints the same one line a thrown
// TimeoutError prints (main.cpp) —
//   collbench: error: rank 0: timed out after 2000 ms waiting for peer to receive from rank 1
//     (op=broadcast algo=naive size=1048576 phase=timed iteration=1 rank=0 peer=1 tag=1 bytes=1048576)
// — flushes, says its last words (rank 0: the `end` record), and _exits, both with ExitStatus::rank_failed (3): only the main thread calls
// MPI (the mpi bootstrap initialises it MPI_THREAD_SINGLE, which Open MPI runs without locks), so this thread may not call MPI
// (no MPI_Abort); the launcher (mpirun, srun) sees a rank exit without finalising and ends the job. Time to exit:
// timeout + at most two ticks + the launcher's teardown.
//
// Self-timed calls (Deadline: thread transport, NCCL, an unwatched MPI transport) throw their
// own TimeoutError at the deadline; for them the watchdog is only a backstop, 2 x timeout + 1 s,
// so it never races their error path (NCCL's ncclCommAbort, an unwinding stack).
//
// While a Watchdog lives, its scope is watched(): the MPI transport then waits in plain
// MPI_Waitall / MPI_Wait / MPI_Barrier (no clock read) instead of polling under a self-timed
// Deadline. When it expires, the rank's thread is blocked inside MPI, so reading the scope's
// call description from this thread races with nothing.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "collectives/transport/call_scope.hpp"
#include "harness/runtime/last_words.hpp"

namespace collbench {

class Watchdog {
 public:
  // Watches `scope` (shared by the measured transport, its wrappers and splits). `world_rank`
  // is the rank printed after "rank " (the World's, as main prints for thrown errors).
  // `last_words` (may be null) are said before the _exit: rank 0 writes the `end` record.
  Watchdog(std::shared_ptr<CallScope> scope, int world_rank, LastWords* last_words = nullptr);
  ~Watchdog();  // stops watching (unwatched again) and joins the thread
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // The tick for a timeout (exposed for tests).
  static std::chrono::microseconds tick_for(std::chrono::milliseconds timeout);
  // How long a call of this kind may run before the watchdog ends the process.
  static std::chrono::milliseconds limit_for(std::chrono::milliseconds timeout, bool self_timed);

 private:
  void watch();
  [[noreturn]] void expire(const CallScope::Waiting& w);
  std::shared_ptr<CallScope> scope_;
  int world_rank_;
  LastWords* last_words_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

// The one line (without "collbench: error: rank R: ") describing a stuck call of `scope`, as
// a TimeoutError thrown by the transport would describe it. Exposed for tests.
std::string stuck_call_message(const CallScope& scope, const CallScope::Waiting& w);

}  // namespace collbench
