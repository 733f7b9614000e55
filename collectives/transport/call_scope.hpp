#pragma once
// The call scope: what the harness is measuring (CallInfo) and the timeout of every blocking
// call made for it. One scope is shared by a transport, every wrapper around it and every
// sub-transport split from it (all hold the same std::shared_ptr), so the harness sets it once
// and an error raised anywhere below names the same op/algo/iteration.
//
// One scope belongs to one rank, i.e. one thread: that thread writes it (the harness, between
// calls) and its transports read it when they raise an error. Another thread (a watchdog,
// harness/runtime/watchdog.hpp) may read only the atomics: whether a blocking call is running,
// which one (a counter), the message it waits for (peer, tag, bytes, direction, transport),
// its timeout, and — for self-timed calls — its deadline. Blocking calls publish them with
// plain stores (single writer: no locked instruction, no lock, no allocation, no clock), so
// every wait, barrier and library collective can afford it. The CallInfo strings are written
// only between blocking calls, before the release store that begins the next one, so a
// watchdog that sees a call stuck (acquire) reads them consistently.
//
// Two ways a call is bounded:
//   BlockingCall  watched: publishes the call and returns; a watchdog thread ends the process
//                 when it outlives its timeout. No clock read on the calling thread. Used when
//                 the scope is watched() (the harness starts a watchdog) and by calls that
//                 cannot poll (library collectives, MPI_Comm_split).
//   Deadline      self-timed: a BlockingCall that also reads the clock and lets the caller poll
//                 expired() and throw TimeoutError (thread transport, NCCL, unwatched MPI).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collectives/core/error.hpp"

namespace collbench {

class Transport;

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

  // A watchdog watches this scope (set before the calls it covers, by the thread that makes
  // them): transports may then block without reading the clock (BlockingCall) instead of
  // polling a Deadline.
  bool watched() const noexcept { return watched_.load(std::memory_order_relaxed); }
  void set_watched(bool w) noexcept { watched_.store(w, std::memory_order_relaxed); }

  // For a watchdog thread. blocking(): a BlockingCall or Deadline is alive (a blocking call is running);
  // blocking_calls(): how many have begun so far (unchanged between two looks = the same call
  // is still stuck); deadline(): the innermost running call's deadline, if any.
  bool blocking() const noexcept { return depth_.load(std::memory_order_acquire) > 0; }
  std::uint64_t blocking_calls() const noexcept { return begun_.load(std::memory_order_acquire); }
  std::optional<Clock::time_point> deadline() const noexcept;

  // What the innermost running call waits for, as published (peer -1: no single peer).
  struct Waiting {
    const Transport* transport = nullptr;  // whose ranks peer is in (a sub-transport's, maybe)
    const char* what = "";                 // static text: "in barrier", "in MPI_Allreduce", ...
    int peer = -1;
    int tag = -1;
    std::size_t bytes = 0;
    bool is_send = false;
    bool self_timed = false;                // a Deadline: the caller throws TimeoutError itself
    std::chrono::milliseconds timeout{0};   // the timeout that applied when the call began
  };
  Waiting waiting() const noexcept;

 private:
  friend class BlockingCall;
  friend class Deadline;
  CallInfo call_;
  std::chrono::milliseconds timeout_;
  std::atomic<bool> watched_{false};
  // Written only by the owning thread (see above); atomics so another thread may read them.
  std::atomic<int> depth_{0};
  std::atomic<std::uint64_t> begun_{0};
  std::atomic<Clock::rep> deadline_{0};  // Clock ticks since its epoch; valid while depth_ > 0
  std::atomic<const Transport*> w_transport_{nullptr};
  std::atomic<const char*> w_what_{""};
  std::atomic<int> w_peer_{-1};
  std::atomic<int> w_tag_{-1};
  std::atomic<std::size_t> w_bytes_{0};
  std::atomic<bool> w_is_send_{false};
  std::atomic<bool> w_self_timed_{false};
  std::atomic<std::int64_t> w_timeout_ms_{0};
};

// The one wording of a timeout, thrown by a self-timed wait or printed by a watchdog:
// "timed out after T ms waiting for peer to receive from rank P" (a send), "... waiting for
// message from peer P" (a receive), or "timed out after T ms <what>" (peer < 0).
std::string timeout_message(std::chrono::milliseconds timeout, int peer, bool is_send, std::string_view what);

// One blocking call, published on its scope for a watchdog: construct it when the call starts
// (a few relaxed stores and one release store, no clock), update message() as it moves from
// one request to the next, let it go when the call ends. It bounds nothing by itself: the
// watchdog (harness/runtime/watchdog.hpp) ends the process when one outlives scope.timeout().
class BlockingCall {
 public:
  BlockingCall(CallScope& scope, const Transport* who, const char* what) noexcept
      : BlockingCall(scope, who, what, false, scope.timeout()) {}
  // With its own timeout instead of the scope's: the harness's control collectives wait
  // longer than the data path, so a rank stuck in the data path is the one that reports.
  BlockingCall(CallScope& scope, const Transport* who, const char* what, std::chrono::milliseconds timeout) noexcept
      : BlockingCall(scope, who, what, false, timeout) {}
  ~BlockingCall() { scope_.depth_.store(scope_.depth_.load(std::memory_order_relaxed) - 1, std::memory_order_release); }
  BlockingCall(const BlockingCall&) = delete;
  BlockingCall& operator=(const BlockingCall&) = delete;

  // The message the call now waits for (relaxed stores: the watchdog reads them only after
  // seeing the call stuck for a whole timeout).
  void message(int peer, int tag, std::size_t bytes, bool is_send) noexcept {
    scope_.w_peer_.store(peer, std::memory_order_relaxed);
    scope_.w_tag_.store(tag, std::memory_order_relaxed);
    scope_.w_bytes_.store(bytes, std::memory_order_relaxed);
    scope_.w_is_send_.store(is_send, std::memory_order_relaxed);
  }

 protected:
  // `deadline` (self-timed calls: Clock ticks; 0 for none) is published before the call is:
  // whoever sees it blocking sees its deadline.
  BlockingCall(CallScope& scope, const Transport* who, const char* what, bool self_timed,
               std::chrono::milliseconds timeout, CallScope::Clock::rep deadline = 0) noexcept
      : scope_(scope) {
    scope_.w_transport_.store(who, std::memory_order_relaxed);
    scope_.w_what_.store(what, std::memory_order_relaxed);
    scope_.w_peer_.store(-1, std::memory_order_relaxed);
    scope_.w_self_timed_.store(self_timed, std::memory_order_relaxed);
    scope_.w_timeout_ms_.store(timeout.count(), std::memory_order_relaxed);
    if (self_timed) scope_.deadline_.store(deadline, std::memory_order_relaxed);
    // Release (both): everything above (and the CallInfo written before) is visible to a
    // watchdog that acquires either count (blocking() reads depth, blocking_calls() begun).
    scope_.depth_.store(scope_.depth_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    scope_.begun_.store(scope_.begun_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  CallScope& scope_;
};

// One self-timed blocking call under its scope's timeout, written once for every transport:
// construct it when the call starts (publishes it like a BlockingCall, plus its deadline),
// poll expired() or poll(done) while it runs, and let it go when the call ends. Reading the
// clock costs ~20 ns, more than polling MPI_Test, so expired() reads it only every
// `clock_every` polls; slow polls (a CUDA stream query) pass kEveryPoll. A watchdog treats a
// self-timed call as a backstop only (the caller throws first; see watchdog.hpp).
class Deadline : public BlockingCall {
 public:
  using Clock = CallScope::Clock;
  static constexpr unsigned kClockEvery = 256;
  static constexpr unsigned kEveryPoll = 1;

  explicit Deadline(CallScope& scope, unsigned clock_every = kClockEvery, const Transport* who = nullptr,
                    const char* what = "") noexcept;
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
  Deadline(CallScope& scope, unsigned clock_every, const Transport* who, const char* what, Clock::time_point at,
           Clock::rep outer) noexcept;
  std::chrono::milliseconds timeout_;
  Clock::time_point at_;
  Clock::rep outer_;  // the enclosing call's deadline, restored at the end
  unsigned clock_every_;
  unsigned polls_ = 0;
};

}  // namespace collbench
