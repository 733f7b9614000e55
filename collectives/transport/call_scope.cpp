#include "collectives/transport/call_scope.hpp"

namespace collbench {
namespace {

void assign_if_changed(std::string& dst, std::string_view src) {
  if (dst != src) dst.assign(src);
}

}  // namespace

void CallScope::set_call(const CallInfo& c) {
  assign_if_changed(call_.op, c.op);
  assign_if_changed(call_.algo, c.algo);
  assign_if_changed(call_.phase, c.phase);
  call_.point_bytes = c.point_bytes;
  call_.iteration = c.iteration;
}

void CallScope::set_phase(std::string_view phase) { assign_if_changed(call_.phase, phase); }

std::optional<CallScope::Clock::time_point> CallScope::deadline() const noexcept {
  // Only a self-timed call (Deadline) has one; a watched call's bound is the watchdog's.
  if (!blocking() || !w_self_timed_.load(std::memory_order_relaxed)) return std::nullopt;
  return Clock::time_point(Clock::duration(deadline_.load(std::memory_order_relaxed)));
}

std::string timeout_message(std::chrono::milliseconds timeout, int peer, bool is_send, std::string_view what) {
  std::string s = "timed out after " + std::to_string(timeout.count()) + " ms ";
  if (peer < 0) return s.append(what);
  return s + (is_send ? "waiting for peer to receive from rank " : "waiting for message from peer ") + std::to_string(peer);
}

CallScope::Waiting CallScope::waiting() const noexcept {
  Waiting w;
  w.transport = w_transport_.load(std::memory_order_relaxed);
  w.what = w_what_.load(std::memory_order_relaxed);
  w.peer = w_peer_.load(std::memory_order_relaxed);
  w.tag = w_tag_.load(std::memory_order_relaxed);
  w.bytes = w_bytes_.load(std::memory_order_relaxed);
  w.is_send = w_is_send_.load(std::memory_order_relaxed);
  w.self_timed = w_self_timed_.load(std::memory_order_relaxed);
  w.timeout = std::chrono::milliseconds(w_timeout_ms_.load(std::memory_order_relaxed));
  return w;
}

// Single writer (the scope's thread): load + store instead of read-modify-write, so beginning
// and ending a call costs a few plain stores. The deadline is stored before the BlockingCall
// base's release store would have published it, so it is written first, then restored after.
Deadline::Deadline(CallScope& scope, unsigned clock_every, const Transport* who, const char* what) noexcept
    : Deadline(scope, clock_every, who, what, Clock::now() + scope.timeout(),
               scope.deadline_.load(std::memory_order_relaxed)) {}

Deadline::Deadline(CallScope& scope, unsigned clock_every, const Transport* who, const char* what, Clock::time_point at,
                   Clock::rep outer) noexcept
    : BlockingCall(scope, who, what, true, scope.timeout(), at.time_since_epoch().count()),
      timeout_(scope.timeout()),
      at_(at),
      outer_(outer),
      clock_every_(clock_every ? clock_every : 1) {}

Deadline::~Deadline() { scope_.deadline_.store(outer_, std::memory_order_relaxed); }

}  // namespace collbench
