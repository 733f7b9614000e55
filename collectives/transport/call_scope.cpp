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
  if (!blocking()) return std::nullopt;
  return Clock::time_point(Clock::duration(deadline_.load(std::memory_order_relaxed)));
}

// Single writer (the scope's thread): load + store instead of read-modify-write, so beginning
// and ending a call costs a few plain stores. Release on depth_ publishes the deadline first.
Deadline::Deadline(CallScope& scope, unsigned clock_every) noexcept
    : scope_(scope),
      timeout_(scope.timeout()),
      at_(Clock::now() + timeout_),
      outer_(scope.deadline_.load(std::memory_order_relaxed)),
      clock_every_(clock_every ? clock_every : 1) {
  scope_.deadline_.store(at_.time_since_epoch().count(), std::memory_order_relaxed);
  scope_.begun_.store(scope_.begun_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  scope_.depth_.store(scope_.depth_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

Deadline::~Deadline() {
  scope_.depth_.store(scope_.depth_.load(std::memory_order_relaxed) - 1, std::memory_order_release);
  scope_.deadline_.store(outer_, std::memory_order_relaxed);
}

}  // namespace collbench
