#pragma once
// TEST-ONLY fault injection, so the reliability tests can plant a hang or a dead rank in a
// real run. Off unless the environment variable COLLBENCH_TEST_FAULT is set:
//
//   COLLBENCH_TEST_FAULT=skip_recv:rank=R:after=N     rank R silently drops its irecv number N
//                                                     (0-based: after N irecvs went through)
//   COLLBENCH_TEST_FAULT=corrupt:rank=R:after=N       rank R flips the lowest bit of the first byte
//                                                     of every message it receives from its irecv
//                                                     number N on (0-based): wrong results, which
//                                                     verification must catch (exit status 1)
//   COLLBENCH_TEST_FAULT=kill:rank=R:after_points=N   rank R raises SIGKILL on itself once N
//                                                     size points have been recorded
//   COLLBENCH_TEST_FAULT=stop:rank=R:after_points=N   rank R raises SIGSTOP on itself there (a
//                                                     stalled rank; the others' watchdogs end it)
//   COLLBENCH_TEST_FAULT=delay:algo=A:min_bytes=N:percent=P
//                                                     every rank, after each call of algorithm A
//                                                     at >= N bytes, spins P % of that call's own
//                                                     time: a planted slowdown of about P % of
//                                                     the point's times (collcompare's tests)
//   COLLBENCH_TEST_FAULT=slow:rank=R:us=N             rank R alone, after each collective call
//                                                     (warm-up, timed, verification), sleeps N us
//                                                     inside the timed region: a straggler (the
//                                                     --per-rank analysis' tests)
//
// skip_recv never posts the receive and makes its wait a no-op, so the sender (for a message
// above the eager limit) never completes: the PEER times out and names rank R. The faulty rank
// itself waits 4x longer from then on, so the healthy peer is the one that reports.
// Nothing here is on the path of a normal run: without the variable no decorator is installed.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectives/transport/forwarding_transport.hpp"
#include "harness/runtime/call_decorator.hpp"

namespace collbench {

class Control;

inline constexpr const char* kFaultEnv = "COLLBENCH_TEST_FAULT";

struct FaultSpec {
  enum class Kind { skip_recv, corrupt, kill, stop, delay, slow };
  Kind kind = Kind::skip_recv;
  int rank = 0;
  long after = 0;  // skip_recv, corrupt: irecvs let through first; kill, stop: points recorded first
  // delay: which calls are slowed, and by how much of their own duration.
  std::string algo;
  std::uint64_t min_bytes = 0;
  double fraction = 0;
  double slow_us = 0;  // slow: the sleep after each call of rank `rank`
  bool delays(std::string_view a, std::uint64_t bytes) const {
    return kind == Kind::delay && a == algo && bytes >= min_bytes;
  }
};

// Parses the grammar above; throws UsageError naming the variable and the accepted forms.
FaultSpec parse_fault_spec(std::string_view text);
// The spec from the environment variable, or nothing when it is unset or empty.
std::optional<FaultSpec> fault_from_env();

// A Transport that forwards everything to `inner`, dropping one irecv (skip_recv) or corrupting
// received messages (corrupt) as the spec says. It
// shares the inner's call scope; sub-transports split from it are faulty too and share its
// counter, so "irecv number N of world rank R" means the same whichever transport posts it.
class FaultyTransport final : public ForwardingTransport {
 public:
  FaultyTransport(Transport& inner, const FaultSpec& spec)
      : FaultyTransport(inner, std::make_shared<State>(State{spec, 0, false, {}})) {}
  Request irecv(void* buf, std::size_t bytes, int peer, int tag) override;
  void wait(Request& r) override;
  void wait_all(std::span<Request> rs) override;
  void barrier() override;

 protected:
  std::unique_ptr<Transport> wrap(Transport& inner_sub) override;

 private:
  struct State {
    FaultSpec spec;
    long recvs;
    bool fired;
    std::vector<std::pair<std::uintptr_t, unsigned char*>> to_corrupt;  // corrupt: (handle, buffer) in flight
  };
  void corrupt_completed(std::span<const std::uintptr_t> handles);
  FaultyTransport(Transport& inner, std::shared_ptr<State> state) : ForwardingTransport(inner), state_(std::move(state)) {}
  // Runs a blocking call; once the fault fired, under 4x the scope's timeout.
  template <class Call>
  void blocking(Call&& call);
  std::shared_ptr<State> state_;
};

// What the sweep holds: the measured transport (decorated when a skip_recv or corrupt fault is
// set), the wrapper around collective calls (delay, slow) and the kill hook called after every
// recorded point. Without COLLBENCH_TEST_FAULT it is inert: transport() is the measured one,
// around_calls() null, after_point() returns at once.
class FaultInjector final : private CallDecorator {
 public:
  FaultInjector(std::optional<FaultSpec> spec, Transport& measured, int world_rank);
  Transport& transport() { return decorated_ ? *decorated_ : measured_; }
  // The delay fault (every rank) or the slow fault (its rank): what wraps each collective call.
  const CallDecorator* around_calls() const { return wraps_calls_ ? this : nullptr; }
  // After `points_done` points were recorded (by rank 0): the kill fault fires here. The
  // barrier first makes sure rank 0 has written those points, so the test is deterministic.
  void after_point(Control& control, long points_done);

 private:
  bool wraps(std::string_view algo, std::uint64_t bytes) const override;
  void around(std::string_view algo, std::uint64_t bytes, const std::function<void()>& call) const override;

  std::optional<FaultSpec> spec_;
  Transport& measured_;
  std::unique_ptr<FaultyTransport> decorated_;
  bool wraps_calls_ = false;
};

}  // namespace collbench
