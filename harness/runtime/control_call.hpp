#pragma once
// One blocking MPI call of the harness's own control plane (control.hpp, clock_sync.hpp),
// published on the rank's call scope so the watchdog (watchdog.hpp) bounds it like the data
// path's calls: no clock read, a few plain stores, none per timed iteration.
//
// A control call also waits for the other ranks' work between blocking calls (verifying a
// large buffer, filling inputs, rank 0 writing results), and a rank stuck in the data path
// must be the one that reports, naming its peer. So it gets a longer limit than the data
// path: 2 x the scope's timeout + 1 s; ranks other than 0 wait 1 s more, so when every rank
// waits for a stalled one, rank 0 reports (one line, and the end record) and the launcher
// ends the others before they print the same line.
#include <chrono>
#include <optional>

#include "collectives/transport/call_scope.hpp"

namespace collbench {

class ControlCall {
 public:
  // `rank`: this rank in the control communicator. `scope` null: nothing is published (no watchdog, e.g. tests of the
  // control plane alone). `peer` >= 0: the one rank this call waits for (a clock-sync ping-pong), named on expiry.
  ControlCall(CallScope* scope, int rank, const char* what, int peer = -1) noexcept {
    if (!scope) return;
    call_.emplace(*scope, nullptr, what, timeout_for(scope->timeout(), rank));
    if (peer >= 0) call_->message(peer, -1, 0, false);
  }
  static std::chrono::milliseconds timeout_for(std::chrono::milliseconds data_path, int rank) {
    return 2 * data_path + std::chrono::milliseconds(rank == 0 ? 1000 : 2000);
  }

 private:
  std::optional<BlockingCall> call_;
};

}  // namespace collbench
