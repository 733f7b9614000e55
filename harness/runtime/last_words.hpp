#pragma once
// What a rank does just before a helper thread ends its process — the watchdog's _exit with
// ExitStatus::rank_failed (watchdog.hpp), the signal watcher's with signal_exit_status(signal)
// (exit_status.hpp) after its grace period
// (signals.hpp): on rank 0, write the `end` record, so the results file says how the run
// ended and which points it kept. The main thread sets the words once the results file is
// open and clears them before closing it; a helper thread says them while the main thread is
// blocked in MPI (it calls no MPI itself). A mutex orders the two; a helper that cannot take
// it within a second (the main thread is in the middle of a write) goes without.
#include <chrono>
#include <functional>
#include <mutex>

namespace collbench {

class LastWords {
 public:
  using Words = std::function<void(int exit_status)>;
  void set(Words w) {
    std::lock_guard lock(mutex_);
    words_ = std::move(w);
  }
  void clear() { set({}); }
  // Once: later calls (a second helper) find nothing to say. Never throws.
  void say(int exit_status) noexcept {
    std::unique_lock lock(mutex_, std::defer_lock);
    if (!lock.try_lock_for(std::chrono::seconds(1))) return;
    Words w = std::move(words_);
    words_ = {};
    if (!w) return;
    try {
      w(exit_status);
    } catch (...) {  // a full disk: the line on stderr still names the failure
    }
  }

 private:
  std::timed_mutex mutex_;
  Words words_;
};

}  // namespace collbench
