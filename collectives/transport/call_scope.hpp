#pragma once
// The call scope: what the harness is measuring (CallInfo) and the timeout of every blocking
// call made for it. One scope is shared by a transport, every wrapper around it and every
// sub-transport split from it (all hold the same std::shared_ptr), so the harness sets it once
// and an error raised anywhere below names the same op/algo/iteration.
//
// One scope belongs to one rank, i.e. one thread: that thread writes it (the harness, between
// calls) and its transports read it when they raise an error. Another thread (a watchdog) may
// read only the atomics: whether a blocking call is running, which one, and its deadline.
// Deadline publishes them with plain stores (single writer: no locked instruction, no lock,
// no allocation), so every wait, barrier and library collective can afford it.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "collectives/core/error.hpp"

namespace collbench {

class CallScope {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kDefaultTimeout{60'000};

  explicit CallScope(std::chrono::milliseconds timeout = kDefaultTimeout) : timeout_(timeout) {}
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // What is being measured. set_call assigns only the strings that changed, so switching
  // between the workloads of an interleaved point reuses their capacity (no allocation).
  const CallInfo& call() const { return call_; }
  void set_call(const CallInfo& c);
  void set_phase(std::string_view phase);
  // The per-iteration update: one store.
  void set_iteration(long i) noexcept { call_.iteration = i; }

  // Every blocking call made under this scope gives up after this long (TimeoutError).
  std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  void set_timeout(std::chrono::milliseconds t) noexcept { timeout_ = t; }

  // For a watchdog thread. blocking(): a Deadline is alive (a blocking call is running);
  // blocking_calls(): how many have begun so far (unchanged between two looks = the same call
  // is still stuck); deadline(): the innermost running call's deadline, if any.
  bool blocking() const noexcept { return depth_.load(std::memory_order_acquire) > 0; }
  std::uint64_t blocking_calls() const noexcept { return begun_.load(std::memory_order_acquire); }
  std::optional<Clock::time_point> deadline() const noexcept;

 private:
  friend class Deadline;
  CallInfo call_;
  std::chrono::milliseconds timeout_;
  // Written only by the owning thread (see above); atomics so another thread may read them.
  std::atomic<int> depth_{0};
  std::atomic<std::uint64_t> begun_{0};
  std::atomic<Clock::rep> deadline_{0};  // Clock ticks since its epoch; valid while depth_ > 0
};

// One blocking call under its scope's timeout, written once for every transport: construct it
// when the call starts (publishes "began" and the deadline on the scope), poll expired() or
// poll(done) while it runs, and let it go when the call ends (publishes "ended"). Reading the
// clock costs ~20 ns, more than polling MPI_Test, so expired() reads it only every
// `clock_every` polls; slow polls (a CUDA stream query) pass kEveryPoll. A call that cannot
// poll (MPI_Comm_split) still holds a Deadline, so a watchdog sees it.
class Deadline {
 public:
  using Clock = CallScope::Clock;
  static constexpr unsigned kClockEvery = 256;
  static constexpr unsigned kEveryPoll = 1;

  explicit Deadline(CallScope& scope, unsigned clock_every = kClockEvery) noexcept;
  ~Deadline();
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

  // Counts one poll; true once the deadline has passed.
  bool expired() noexcept {
    if (++polls_ < clock_every_) return false;
    polls_ = 0;
    return Clock::now() > at_;
  }
  // Polls done() until it returns true (-> true) or the deadline passes first (-> false).
  template <class Done>
  bool poll(Done&& done) {
    for (;;) {
      if (done()) return true;
      if (expired()) return false;
    }
  }

  Clock::time_point at() const noexcept { return at_; }
  std::chrono::milliseconds timeout() const noexcept { return timeout_; }

 private:
  CallScope& scope_;
  std::chrono::milliseconds timeout_;
  Clock::time_point at_;
  Clock::rep outer_;  // the enclosing call's deadline, restored at the end
  unsigned clock_every_;
  unsigned polls_ = 0;
};

}  // namespace collbench
