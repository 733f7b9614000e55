#include "harness/runtime/clock_sync.hpp"

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "collectives/core/error.hpp"
#include "harness/plan/settings.hpp"
#include "harness/runtime/control.hpp"
#include "harness/runtime/control_call.hpp"

namespace collbench {
namespace {

constexpr int kTag = kClockSyncTag;
constexpr std::size_t kFits = 32;  // estimations kept for the drift fit
constexpr double kMinDriftSpanUs = 50e3;  // fit a drift only over estimations this far apart

// What makes steady_clock (CLOCK_MONOTONIC) one clock: the kernel boot and the time namespace
// (which may offset it). Empty when unknown: the rank is then estimated.
std::string clock_domain() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!std::getline(boot, id) || id.empty()) return {};
  std::error_code ec;  // no time namespaces (kernel < 5.6): the boot alone decides
  const auto ns = std::filesystem::read_symlink("/proc/self/ns/time", ec);
  return id + "|" + (ec ? std::string() : ns.string());
}

}  // namespace

TestClock parse_test_clock(std::string_view text) {
  constexpr const char* kAccepted = "OFFSET_US:DRIFT_PPM, two numbers, e.g. 1000:50 (test only)";
  const std::size_t c = text.find(':');
  try {
    if (c == std::string_view::npos) throw UsageError("no ':'");
    return {parse_number(text.substr(0, c), -1e9, 1e9, kAccepted), parse_number(text.substr(c + 1), -1e5, 1e5, kAccepted)};
  } catch (const UsageError&) {
    throw UsageError(std::string(kTestClockEnv) + "='" + std::string(text) + "': bad value; accepted: " + kAccepted);
  }
}

std::optional<TestClock> test_clock_from_env() {
  const char* v = std::getenv(kTestClockEnv);
  if (!v || !*v) return std::nullopt;
  return parse_test_clock(v);
}

void ClockSync::detect_shared_clock() {
  std::array<char, 256> root{};
  const std::string mine = clock_domain();
  if (rank_ == 0) mine.copy(root.data(), root.size() - 1);
  const ControlCall call(scope_, rank_, "in the clock-sync clock comparison (harness control; some rank never arrived)");
  world_.broadcast(std::as_writable_bytes(std::span(root)), 0);
  // The test hook gives every rank a clock of its own: estimate them all.
  const int shared = rank_ == 0 || (!test_ && !mine.empty() && mine == root.data());
  shared_.assign(static_cast<std::size_t>(size_), 0);
  world_.allgather(std::as_bytes(std::span(&shared, 1)), std::as_writable_bytes(std::span(shared_)));
}

double ClockSync::estimate(int rounds) {
  if (shared_.empty()) detect_shared_clock();
  double best_rtt = std::numeric_limits<double>::infinity(), best_offset = 0, best_mid = 0;
  if (shared_[static_cast<std::size_t>(rank_)]) {  // rank 0, and ranks reading its clock: exact
    best_rtt = 0;
    best_mid = local_now();
  }
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r) {
      if (shared_[static_cast<std::size_t>(r)]) continue;
      // One published call per peer, outside the rounds: nothing added inside a ping-pong.
      const ControlCall call(scope_, rank_, "in the clock-sync ping-pong (harness control)", r);
      for (int i = 0; i < rounds; ++i) {
        char ping = 0;
        world_.recv(std::as_writable_bytes(std::span(&ping, 1)), r, kTag);
        const double t0 = local_now();
        world_.send(std::as_bytes(std::span(&t0, 1)), r, kTag);
      }
    }
  } else if (!shared_[static_cast<std::size_t>(rank_)]) {
    const ControlCall call(scope_, rank_, "in the clock-sync ping-pong (harness control)", 0);
    for (int i = 0; i < rounds; ++i) {
      char ping = 0;
      double t0 = 0;
      const double t1 = local_now();
      world_.send(std::as_bytes(std::span(&ping, 1)), 0, kTag);
      world_.recv(std::as_writable_bytes(std::span(&t0, 1)), 0, kTag);
      const double t2 = local_now();
      if (t2 - t1 < best_rtt) {
        best_rtt = t2 - t1;
        best_mid = (t1 + t2) / 2;
        best_offset = best_mid - t0;
      }
    }
  }
  error_us_ = best_rtt / 2;
  double err = error_us_;
  {
    const ControlCall call(scope_, rank_, world_.describe(World::Call::allreduce));
    world_.allreduce(std::span(&err, 1), World::Reduce::max);
  }
  max_error_us_ = err;
  last_raw_us_ = raw_us(SteadyClock::now());

  fits_.push_back({best_mid, best_offset});
  if (fits_.size() > kFits) fits_.erase(fits_.begin());
  // offset(local) = last offset + slope·(local − last midpoint); slope by least squares over
  // the kept estimations once they span long enough for a drift to show above the error.
  slope_ = 0;
  if (fits_.size() >= 2 && fits_.back().at_local_us - fits_.front().at_local_us >= kMinDriftSpanUs) {
    double mx = 0, my = 0;
    for (const Fit& f : fits_) {
      mx += f.at_local_us;
      my += f.offset_us;
    }
    mx /= static_cast<double>(fits_.size());
    my /= static_cast<double>(fits_.size());
    double sxy = 0, sxx = 0;
    for (const Fit& f : fits_) {
      sxy += (f.at_local_us - mx) * (f.offset_us - my);
      sxx += (f.at_local_us - mx) * (f.at_local_us - mx);
    }
    if (sxx > 0) slope_ = sxy / sxx;
  }
  ref_ = fits_.back().at_local_us;
  intercept_ = fits_.back().offset_us;
  return max_error_us_;
}

void ClockSync::refresh(double max_age_s) {
  // Rank 0 decides, so every rank takes part in the same estimations.
  int again = !estimated() || raw_us(SteadyClock::now()) - last_raw_us_ > max_age_s * 1e6;
  {
    const ControlCall call(scope_, rank_, world_.describe(World::Call::broadcast));
    world_.broadcast(std::as_writable_bytes(std::span(&again, 1)), 0);
  }
  if (again) estimate();
}

double ClockSync::offset_us(double local) const { return intercept_ + slope_ * (local - ref_); }

double ClockSync::global_of_raw(double raw) const {
  const double local = local_of_raw(raw);
  return local - offset_us(local);
}

double ClockSync::raw_of_global(double global) const {
  double local = global + offset_us(global + intercept_);  // one fixed-point step: the slope is tiny
  local = global + offset_us(local);
  return raw_of_local(local);
}

}  // namespace collbench
