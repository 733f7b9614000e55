#pragma once
// Clock offsets of every rank to rank 0, for synchronized-start timing (as ReproMPI does:
// Hunold & Carpen-Amarie, IEEE TPDS 2016). Each rank ping-pongs with rank 0 over the control
// communicator; of each estimation's rounds the one with the smallest round-trip time is kept
// (offset = midpoint of the rank's send and receive times − rank 0's reply time, error at most
// half that round trip). Estimations repeated over a run are fitted linearly, so a clock that
// drifts against rank 0's is followed between them.
//
// Times are microseconds as doubles: "raw" is std::chrono::steady_clock (what every timed
// sample reads), "local" is the rank's clock as the estimation sees it (raw, unless the test
// hook below skews it), "global" is rank 0's local clock.
//
// Ranks that read rank 0's very clock (the same kernel boot and time namespace: every rank of
// one machine, emulated nodes included) are not estimated: their offset is exactly 0, where a
// ping-pong estimate would be off by tens of ns and start them that much late or early.
//
// TEST ONLY: COLLBENCH_TEST_CLOCK=OFFSET_US:DRIFT_PPM makes rank r's local clock
// raw + r·OFFSET_US + r·DRIFT_PPM·1e-6·raw, so tests can prove that injected offsets and drifts
// are recovered (all ranks of one machine share one kernel clock). Without it local = raw.
#include "collectives/backends/world.hpp"

#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

#include "collectives/transport/call_scope.hpp"

namespace collbench {

inline constexpr const char* kTestClockEnv = "COLLBENCH_TEST_CLOCK";

struct TestClock {
  double offset_us_per_rank = 0;
  double drift_ppm_per_rank = 0;
  // The skewed local clock of `rank` at raw time `raw_us`, and its inverse.
  double local_us(double raw_us, int rank) const {
    return raw_us + rank * offset_us_per_rank + rank * drift_ppm_per_rank * 1e-6 * raw_us;
  }
  double raw_us(double local_us, int rank) const {
    return (local_us - rank * offset_us_per_rank) / (1 + rank * drift_ppm_per_rank * 1e-6);
  }
};

// "OFFSET_US:DRIFT_PPM" (numbers, may be negative); throws UsageError naming the variable.
TestClock parse_test_clock(std::string_view text);
std::optional<TestClock> test_clock_from_env();

using SteadyClock = std::chrono::steady_clock;
inline double raw_us(SteadyClock::time_point t) {
  return std::chrono::duration<double, std::micro>(t.time_since_epoch()).count();
}
inline SteadyClock::time_point raw_time_point(double us) {
  return SteadyClock::time_point(std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double, std::micro>(us)));
}

class ClockSync {
 public:
  // `scope` (may be null): where the ping-pongs and reductions are published for the watchdog.
  // Over `world` (the control plane's), which outlives this.
  explicit ClockSync(World& world, CallScope* scope = nullptr)
      : world_(world), rank_(world.rank()), size_(world.size()), scope_(scope) {}

  // Every rank's clock its own from now on: the next estimate() estimates them all afresh.
  void set_test_clock(const TestClock& c) {
    test_ = c;
    shared_.clear();
    fits_.clear();
  }

  // Collective: one estimation of every rank's offset to rank 0 (`rounds` ping-pongs each),
  // added to the fit. Returns the largest error bound over ranks (half the kept round trip).
  double estimate(int rounds = 30);
  // Collective: estimates again when the last estimation is older than `max_age_s` (or when
  // there is none), so a drifting clock is followed over a long run.
  void refresh(double max_age_s);

  // This rank's offset to rank 0 at its local time `local_us` (global = local − offset).
  double offset_us(double local_us) const;
  double drift_ppm() const { return slope_ * 1e6; }
  double error_us() const { return error_us_; }           // this rank: half its kept round trip
  double max_error_us() const { return max_error_us_; }   // all ranks, from the last estimation
  bool estimated() const { return !fits_.empty(); }
  // Per rank: 1 when it reads rank 0's clock (not estimated, offset 0). Set by the first estimate().
  const std::vector<int>& shares_root_clock() const { return shared_; }

  // Clock-started points that fell back to the barrier in a row (measure.cpp): past a few,
  // later points start with the barrier and try the clock again only now and then, so an
  // oversubscribed run does not pay for failing passes at every point.
  int fallbacks_in_a_row = 0;
  long points_since_fallback_check = 0;

  double local_now() const { return local_of_raw(raw_us(SteadyClock::now())); }
  double local_of_raw(double raw) const { return test_ ? test_->local_us(raw, rank_) : raw; }
  double raw_of_local(double local) const { return test_ ? test_->raw_us(local, rank_) : local; }
  double global_of_raw(double raw) const;
  double raw_of_global(double global) const;
  double global_now() const { return global_of_raw(raw_us(SteadyClock::now())); }

 private:
  struct Fit {
    double at_local_us;  // local midpoint of the kept ping-pong
    double offset_us;
  };
  void detect_shared_clock();  // collective, once: fills shared_

  World& world_;
  int rank_, size_;
  CallScope* scope_;
  std::optional<TestClock> test_;
  std::vector<Fit> fits_;
  std::vector<int> shared_;                     // per rank, 1 = reads rank 0's clock (after estimate())
  double intercept_ = 0, slope_ = 0, ref_ = 0;  // offset(local) = intercept + slope·(local − ref)
  double error_us_ = 0, max_error_us_ = 0;
  double last_raw_us_ = 0;
};

}  // namespace collbench
