#include "harness/runtime/watchdog.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "collectives/transport/transport.hpp"
#include "harness/exit_status.hpp"

namespace collbench {

std::chrono::microseconds Watchdog::tick_for(std::chrono::milliseconds timeout) {
  using std::chrono::microseconds;
  return std::clamp<microseconds>(std::chrono::duration_cast<microseconds>(timeout) / 8, microseconds(1000),
                                  microseconds(100'000));
}

std::chrono::milliseconds Watchdog::limit_for(std::chrono::milliseconds timeout, bool self_timed) {
  return self_timed ? 2 * timeout + std::chrono::milliseconds(1000) : timeout;
}

std::string stuck_call_message(const CallScope& scope, const CallScope::Waiting& w) {
  ErrorContext c;
  c.call = scope.call();
  if (w.transport) {
    // A sub-transport's ranks are its own; name the world ranks too, as Transport does.
    c.rank = w.transport->rank();
    const std::string_view split = w.transport->split_name();
    if (!split.empty()) {
      c.split = split;
      c.world_rank = w.transport->world_rank(c.rank);
      if (w.peer >= 0 && w.peer < w.transport->size()) c.world_peer = w.transport->world_rank(w.peer);
    }
  }
  if (w.peer >= 0) {
    c.peer = w.peer;
    c.tag = w.tag;
    c.bytes = w.bytes;
  }
  return TimeoutError(timeout_message(w.timeout, w.peer, w.is_send, w.what), c).what();
}

Watchdog::Watchdog(std::shared_ptr<CallScope> scope, int world_rank, LastWords* last_words)
    : scope_(std::move(scope)), world_rank_(world_rank), last_words_(last_words) {
  scope_->set_watched(true);
  thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  thread_.join();
  scope_->set_watched(false);
}

void Watchdog::watch() {
  using Clock = std::chrono::steady_clock;
  std::uint64_t seen = 0;     // begin count of the call being followed
  bool following = false;     // a call was running at the last look
  Clock::time_point since{};  // when this thread first saw it running
  std::unique_lock lock(mutex_);
  while (!done_) {
    // The tick follows the timeout published by the latest call (timeout() itself belongs to
    // the rank's thread; before the first call: the default).
    const auto timeout = scope_->waiting().timeout;
    wake_.wait_for(lock, tick_for(timeout.count() > 0 ? timeout : CallScope::kDefaultTimeout));
    if (done_) break;
    const bool blocking = scope_->blocking();
    const std::uint64_t begun = scope_->blocking_calls();  // acquire: the call's publication
    const auto now = Clock::now();
    if (!blocking) {
      following = false;
      continue;
    }
    if (!following || begun != seen) {  // a new call since the last look
      following = true;
      seen = begun;
      since = now;
      continue;
    }
    const CallScope::Waiting stuck = scope_->waiting();
    if (now - since >= limit_for(stuck.timeout, stuck.self_timed)) expire(stuck);
  }
}

void Watchdog::expire(const CallScope::Waiting& w) {
  // Still the same call (no new begin, still running) — read everything once more, then go.
  const std::string line = "collbench: error: rank " + std::to_string(world_rank_) + ": " + stuck_call_message(*scope_, w) + "\n";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  std::fflush(stdout);
  constexpr int status = code(ExitStatus::rank_failed);
  if (last_words_) last_words_->say(status);  // after the line: a slow disk must not delay it
  ::_exit(status);
}

}  // namespace collbench
