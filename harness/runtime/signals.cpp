#include "harness/runtime/signals.hpp"

#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <ctime>

#include "harness/exit_status.hpp"

namespace collbench {
namespace {

sigset_t termination_set() {
  sigset_t s;
  sigemptyset(&s);
  for (int sig : kStopSignals) sigaddset(&s, sig);
  return s;
}

// Waits up to `ms` for one of kStopSignals (SIGTERM, SIGINT); the signal, or 0.
int wait_signal(long ms) {
  const sigset_t s = termination_set();
  timespec ts{ms / 1000, (ms % 1000) * 1'000'000};
  const int sig = sigtimedwait(&s, nullptr, &ts);
  return sig > 0 ? sig : 0;
}

}  // namespace

void block_termination_signals() {
  const sigset_t s = termination_set();
  pthread_sigmask(SIG_BLOCK, &s, nullptr);
}

TerminationWatcher::TerminationWatcher(std::chrono::milliseconds grace, bool speaker, LastWords* last_words)
    : grace_(grace), speaker_(speaker), last_words_(last_words), thread_([this] { watch(); }) {}

TerminationWatcher::~TerminationWatcher() {
  done_ = true;
  thread_.join();
}

void TerminationWatcher::watch() {
  constexpr long kPollMs = 100;  // how quickly the destructor is noticed
  while (!done_) {
    const int sig = wait_signal(kPollMs);
    if (sig == 0) continue;
    if (const int status = settled_.load(); status >= 0) {
      // The run's outcome is decided (a usage error, a finished sweep): the launcher is only
      // cleaning up after a rank that exited first. Nothing to say; exit with that outcome if
      // this rank has not ended by the grace period.
      for (auto waited = std::chrono::milliseconds(0); waited < grace_ && !done_; waited += std::chrono::milliseconds(kPollMs))
        wait_signal(kPollMs);
      if (done_) return;
      std::fflush(stdout);
      ::_exit(status);
    }
    signal_ = sig;
    if (speaker_)
      std::fprintf(stderr, "collbench: received %s: stopping; finished points are kept, the point in progress is dropped\n",
                   sig == SIGTERM ? "SIGTERM" : "SIGINT");
    // The end record and the footer at once: a launcher that got the signal too kills its ranks
    // soon (Open MPI's mpirun: SIGTERM, then SIGKILL 1 s later), often before a point ends.
    if (last_words_) last_words_->say(signal_exit_status(sig));
    // The sweep stops at the next point boundary; a second signal or the grace period ends it now.
    for (auto waited = std::chrono::milliseconds(0); waited < grace_ && !done_; waited += std::chrono::milliseconds(kPollMs))
      if (wait_signal(kPollMs) != 0) break;
    if (done_) return;
    std::fprintf(stderr, "collbench: the current point did not end within %lld ms of the signal; exiting %d\n",
                 static_cast<long long>(grace_.count()), signal_exit_status(sig));
    std::fflush(stderr);
    std::fflush(stdout);
    if (last_words_) last_words_->say(signal_exit_status(sig));
    ::_exit(signal_exit_status(sig));
  }
}

}  // namespace collbench
