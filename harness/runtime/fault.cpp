#include "harness/runtime/fault.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "harness/runtime/control.hpp"
#include "harness/plan/settings.hpp"

namespace collbench {
namespace {

constexpr const char* kFaultAccepted =
    "skip_recv:rank=R:after=N, corrupt:rank=R:after=N, kill:rank=R:after_points=N, stop:rank=R:after_points=N or "
    "delay:algo=A:min_bytes=N:percent=P or slow:rank=R:us=N (test only)";

[[noreturn]] void bad_fault(std::string_view text, const std::string& why) {
  throw UsageError(std::string(kFaultEnv) + "='" + std::string(text) + "': " + why + "; accepted: " + kFaultAccepted);
}

// "key=value" -> value, when the key matches.
std::optional<std::string_view> value_of(std::string_view field, std::string_view key) {
  if (field.size() <= key.size() || field.substr(0, key.size()) != key || field[key.size()] != '=')
    return std::nullopt;
  return field.substr(key.size() + 1);
}

std::vector<std::string_view> split_colons(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const std::size_t c = text.find(':', start);
    out.push_back(text.substr(start, c == std::string_view::npos ? std::string_view::npos : c - start));
    if (c == std::string_view::npos) return out;
    start = c + 1;
  }
}

FaultSpec parse_delay(std::string_view text, const std::vector<std::string_view>& f) {
  if (f.size() != 4) bad_fault(text, "expected four ':'-separated fields");
  const auto algo = value_of(f[1], "algo");
  const auto min_bytes = value_of(f[2], "min_bytes");
  const auto percent = value_of(f[3], "percent");
  if (!algo || !min_bytes || !percent) bad_fault(text, "expected delay:algo=A:min_bytes=N:percent=P");
  FaultSpec s;
  s.kind = FaultSpec::Kind::delay;
  s.algo = std::string(*algo);
  try {
    s.min_bytes = static_cast<std::uint64_t>(parse_int(*min_bytes, 0, 1LL << 50, "an integer >= 0"));
    s.fraction = static_cast<double>(parse_int(*percent, 0, 1000, "an integer 0..1000")) / 100.0;
  } catch (const UsageError&) {
    bad_fault(text, "min_bytes and percent must be integers >= 0 (percent <= 1000)");
  }
  return s;
}

FaultSpec parse_slow(std::string_view text, const std::vector<std::string_view>& f) {
  if (f.size() != 3) bad_fault(text, "expected three ':'-separated fields");
  const auto rank = value_of(f[1], "rank");
  const auto us = value_of(f[2], "us");
  if (!rank || !us) bad_fault(text, "expected slow:rank=R:us=N");
  FaultSpec s;
  s.kind = FaultSpec::Kind::slow;
  try {
    s.rank = static_cast<int>(parse_int(*rank, 0, 1 << 30, "an integer >= 0"));
    s.slow_us = static_cast<double>(parse_int(*us, 1, 10'000'000, "an integer 1..10000000"));
  } catch (const UsageError&) {
    bad_fault(text, "rank must be an integer >= 0 and us one from 1 to 10000000");
  }
  return s;
}

}  // namespace

FaultSpec parse_fault_spec(std::string_view text) {
  const auto f = split_colons(text);
  if (f[0] == "delay") return parse_delay(text, f);
  if (f[0] == "slow") return parse_slow(text, f);
  if (f.size() != 3) bad_fault(text, "expected three ':'-separated fields");
  FaultSpec s;
  const char* after_key = nullptr;
  if (f[0] == "skip_recv" || f[0] == "corrupt") {
    s.kind = f[0] == "skip_recv" ? FaultSpec::Kind::skip_recv : FaultSpec::Kind::corrupt;
    after_key = "after";
  } else if (f[0] == "kill" || f[0] == "stop") {
    s.kind = f[0] == "kill" ? FaultSpec::Kind::kill : FaultSpec::Kind::stop;
    after_key = "after_points";
  } else {
    bad_fault(text, "unknown fault '" + std::string(f[0]) + "'");
  }
  const auto rank = value_of(f[1], "rank");
  const auto after = value_of(f[2], after_key);
  if (!rank || !after) bad_fault(text, "expected rank=R:" + std::string(after_key) + "=N");
  try {
    s.rank = static_cast<int>(parse_int(*rank, 0, 1 << 30, "an integer >= 0"));
    s.after = static_cast<long>(parse_int(*after, 0, 1LL << 40, "an integer >= 0"));
  } catch (const UsageError&) {
    bad_fault(text, "rank and counts must be integers >= 0");
  }
  return s;
}

std::optional<FaultSpec> fault_from_env() {
  const char* v = std::getenv(kFaultEnv);
  if (!v || !*v) return std::nullopt;
  return parse_fault_spec(v);
}

template <class Call>
void FaultyTransport::blocking(Call&& call) {
  if (!state_->fired) return call();
  // After the fault the faulty rank waits longer, so its healthy peers time out first. The
  // scope is shared with the inner transport, so scale it for this call only.
  CallScope& s = scope();
  const std::chrono::milliseconds normal = s.timeout();
  s.set_timeout(normal * 4);
  try {
    call();
  } catch (...) {
    s.set_timeout(normal);
    throw;
  }
  s.set_timeout(normal);
}

Request FaultyTransport::irecv(void* buf, std::size_t bytes, int peer, int tag) {
  State& st = *state_;
  if (st.spec.kind == FaultSpec::Kind::corrupt) {
    Request r = inner().irecv(buf, bytes, peer, tag);
    if (world_rank(rank()) == st.spec.rank && st.recvs++ >= st.spec.after && bytes > 0 && r.active)
      st.to_corrupt.emplace_back(r.handle, static_cast<unsigned char*>(buf));
    return r;
  }
  const bool drop =
      st.spec.kind == FaultSpec::Kind::skip_recv && world_rank(rank()) == st.spec.rank && st.recvs++ == st.spec.after;
  if (!drop) return inner().irecv(buf, bytes, peer, tag);
  st.fired = true;
  std::fprintf(stderr, "collbench: test fault: rank %d drops irecv #%ld from peer %d (%s)\n", rank(), st.spec.after,
               peer, error_context().describe().c_str());
  return Request{0, peer, tag, bytes, false, false};  // inactive: wait() on it returns at once
}

// corrupt: once a receive that irecv marked has completed, its first byte's lowest bit flips
// (in the transport's memory space, so device buffers work too).
void FaultyTransport::corrupt_completed(std::span<const std::uintptr_t> handles) {
  auto& marked = state_->to_corrupt;
  for (std::uintptr_t h : handles)
    for (std::size_t i = 0; i < marked.size(); ++i)
      if (marked[i].first == h) {
        unsigned char b = 0;
        memory().download(&b, marked[i].second, 1);
        b ^= 1;
        memory().upload(marked[i].second, &b, 1);
        marked.erase(marked.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
}

void FaultyTransport::wait(Request& r) {
  const std::uintptr_t h = r.handle;
  const bool recv = r.active && !r.is_send;
  blocking([&] { inner().wait(r); });
  if (recv && !state_->to_corrupt.empty()) corrupt_completed({&h, 1});
}

void FaultyTransport::wait_all(std::span<Request> rs) {
  std::vector<std::uintptr_t> handles;
  if (!state_->to_corrupt.empty())
    for (const Request& r : rs)
      if (r.active && !r.is_send) handles.push_back(r.handle);
  blocking([&] { inner().wait_all(rs); });
  if (!handles.empty()) corrupt_completed(handles);
}

void FaultyTransport::barrier() {
  blocking([&] { inner().barrier(); });
}

std::unique_ptr<Transport> FaultyTransport::wrap(Transport& inner_sub) {
  return std::unique_ptr<Transport>(new FaultyTransport(inner_sub, state_));
}

FaultInjector::FaultInjector(std::optional<FaultSpec> spec, Transport& measured, int world_rank)
    : spec_(spec), measured_(measured) {
  if (spec_ && (spec_->kind == FaultSpec::Kind::skip_recv || spec_->kind == FaultSpec::Kind::corrupt))
    decorated_ = std::make_unique<FaultyTransport>(measured_, *spec_);
  wraps_calls_ = spec_ && (spec_->kind == FaultSpec::Kind::delay ||
                           (spec_->kind == FaultSpec::Kind::slow && spec_->rank == world_rank));
}

bool FaultInjector::wraps(std::string_view algo, std::uint64_t bytes) const {
  return wraps_calls_ && (spec_->kind == FaultSpec::Kind::slow || spec_->delays(algo, bytes));
}

void FaultInjector::around(std::string_view, std::uint64_t, const std::function<void()>& call) const {
  using Clock = std::chrono::steady_clock;
  if (spec_->kind == FaultSpec::Kind::slow) {
    call();
    // A straggler sleeps rather than spins: on a machine with more ranks than cores a spinning
    // rank would take the others' core and slow them more than itself.
    std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(spec_->slow_us));
    return;
  }
  // delay: spin the given fraction of the call's own time after it.
  const Clock::time_point t0 = Clock::now();
  call();
  const Clock::time_point t1 = Clock::now();
  const Clock::time_point until = t1 + std::chrono::duration_cast<Clock::duration>((t1 - t0) * spec_->fraction);
  while (Clock::now() < until) {
  }
}

void FaultInjector::after_point(Control& control, long points_done) {
  if (!spec_ || (spec_->kind != FaultSpec::Kind::kill && spec_->kind != FaultSpec::Kind::stop) ||
      points_done != spec_->after)
    return;
  control.barrier();  // every rank, so rank 0 has flushed the points before the fault
  if (control.rank() != spec_->rank) return;
  const bool kill = spec_->kind == FaultSpec::Kind::kill;
  std::fprintf(stderr, "collbench: test fault: rank %d %s after %ld points\n", control.rank(),
               kill ? "kills itself (SIGKILL)" : "stops itself (SIGSTOP)", points_done);
  std::fflush(stderr);
  // SIGSTOP: a rank that hangs outside any call of its own (a stalled node, a debugger): the
  // others wait for it in the next control collective, which their watchdogs bound.
  std::raise(kill ? SIGKILL : SIGSTOP);
}

}  // namespace collbench
