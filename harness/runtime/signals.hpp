#pragma once
// SIGTERM/SIGINT handling that keeps the results file valid. Slurm's time limit (and
// scancel) sends SIGTERM to every task, then SIGKILL after KillWait (30 s by default).
//
// main() blocks both signals before MPI_Init, so every thread (MPI's too) inherits the mask;
// a TerminationWatcher thread then takes them with sigtimedwait(). No signal handler runs, so
// there is no global flag: the signal number lives in the watcher. On rank 0 the watcher says
// the last words at once (LastWords: the `end` record with exit_status signal_exit_status(signal),
// 128 + signal, exit_status.hpp, and the table's footer), since a launcher may kill the ranks
// a second later; the point in progress is then dropped. The sweep polls requested() between
// points (agreed over ranks), abandons the rest and exits with that status. If the current point
// does not end within the grace period (a long point, or a rank stuck in MPI), the watcher
// _exits with it.
#include <atomic>
#include <chrono>
#include <thread>

#include "harness/runtime/last_words.hpp"

namespace collbench {

// Blocks kStopSignals (SIGTERM, SIGINT; exit_status.hpp) in the calling thread and the threads it creates later.
void block_termination_signals();

class TerminationWatcher {
 public:
  // `last_words` (may be null) are said before the _exit after the grace period.
  TerminationWatcher(std::chrono::milliseconds grace, bool speaker, LastWords* last_words = nullptr);
  ~TerminationWatcher();  // the sweep ended: stop watching (no _exit after this)
  TerminationWatcher(const TerminationWatcher&) = delete;
  TerminationWatcher& operator=(const TerminationWatcher&) = delete;

  int signal() const { return signal_.load(); }  // 0, or the signal received
  bool requested() const { return signal() != 0; }
  // The run's exit status is decided: a signal after this is the launcher ending a job whose
  // other rank exited first, taken silently (no "received" line, no last words).
  void settle(int exit_status) { settled_ = exit_status; }

 private:
  void watch();
  std::chrono::milliseconds grace_;
  bool speaker_;
  LastWords* last_words_;
  std::atomic<int> signal_{0};
  std::atomic<int> settled_{-1};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

inline constexpr std::chrono::milliseconds kTerminationGrace{3000};

}  // namespace collbench
