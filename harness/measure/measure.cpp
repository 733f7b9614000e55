#include "harness/measure/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <thread>
#include <tuple>

#include "harness/results/stats.hpp"
#include "harness/results/result.hpp"
#include "harness/runtime/clock_sync.hpp"
#include "harness/runtime/control.hpp"
#include "harness/runtime/control_call.hpp"

namespace collbench {
namespace {

using Clock = std::chrono::steady_clock;

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// Clock start: how long before the agreed start a rank stops sleeping and spins (250 us plus
// 2 % of the wait: on this VM a 40 ms sleep overshoots by 160-300 us, and a wide window's
// starts were late on the rank that slept), and how far past it a rank's op may begin before
// the sample counts as late.
constexpr auto kSleepAboveUs = std::chrono::microseconds(400);
constexpr auto kWakeEarlyUs = std::chrono::microseconds(250);
constexpr int kWakeEarlyPerWait = 50;  // 1/50 of the wait
constexpr auto kLateToleranceUs = std::chrono::microseconds(1);

struct Rounds {
  long first;           // samples in the first round
  long cap;             // at most this many samples
  int ops_per_sample;   // 1, or iters in batch mode
};

Rounds rounds_for(const TimingSpec& s) {
  const bool batch = s.mode == TimingMode::batch;
  const int ops = batch ? s.iters : 1;
  const long first = batch ? (s.adaptive ? 2 : 1) : s.iters;
  const long cap = s.adaptive ? std::max<long>(first, s.max_iters / ops) : first;
  return {first, cap, ops};
}

}  // namespace

double time_sample(Transport& t, Workload& w, const CallInfo& timed_call, long index, int ops, SampleStart start) {
  return time_sample_stamped(t, w, timed_call, index, ops, start).us;
}

SampleStamp time_sample_stamped(Transport& t, Workload& w, const CallInfo& timed_call, long index, int ops,
                                SampleStart start, double start_at_raw_us) {
  // Interleaved workloads switch calls; set_call copies only strings that changed (none when
  // one workload is timed), so the per-sample update is the iteration store.
  CallScope& scope = t.scope();
  scope.set_call(timed_call);
  scope.set_iteration(index);
  w.before_start();
  if (start == SampleStart::barrier) t.barrier();
  MemorySpace& m = t.memory();
  nvtx::Range r(ops == 1 ? w.labels().iter : w.labels().batch, index);
  SampleStamp s;
  auto t0 = Clock::now();
  auto from = t0;
  if (start == SampleStart::clock) {
    // Wait for the agreed start: asleep while it is far (a spinning rank on a shared core gets
    // preempted), then spinning. Arriving after it, or leaving the wait more than
    // kLateToleranceUs after it (preempted while waiting), is "late": the sample is excluded.
    const auto at = raw_time_point(start_at_raw_us);
    if (at - t0 > kSleepAboveUs) std::this_thread::sleep_for(at - t0 - kWakeEarlyUs - (at - t0) / kWakeEarlyPerWait);
    t0 = Clock::now();
    while (t0 < at) t0 = Clock::now();
    if (t0 - at > kLateToleranceUs) {
      s.late = true;
      s.lateness_us = micros(t0 - at);
    } else {
      from = at;
    }
  }
  w.run_n(ops);
  m.synchronize();
  const auto t1 = Clock::now();
  s.us = micros(t1 - from) / ops;
  s.begin_raw_us = raw_us(t0);
  return s;
}

TimingSpec timing_spec(const Settings& s, double barrier_us) {
  TimingSpec t{s.mode(), s.iters, s.warmup, s.adaptive(), s.min_time_s, s.max_noise, s.max_iters};
  t.sync = s.sync;
  t.per_rank = s.per_rank;
  t.clock_start_below_us = kClockStartBarrierFactor * barrier_us;
  return t;
}

void warm_up(Transport& t, Workload& w, int count, Control* control, double min_s) {
  if (count <= 0) return;
  constexpr int kMaxRounds = 12;
  CallScope& scope = t.scope();
  scope.set_call(w.call());
  scope.set_phase("warmup");
  nvtx::Range r(w.labels().warmup);
  long done = 0;
  // One round of n calls: its seconds, and the mean per call of its second half, the op-time
  // estimate (the clock start's first window): the first calls page-fault fresh buffers
  // (16 MiB: a 13 ms mean for a 5 ms op).
  const auto round = [&](long n) {
    const long from = n / 2;
    const auto began = Clock::now();
    auto t0 = began;
    for (long i = 0; i < n; ++i) {
      if (i == from) t0 = Clock::now();
      scope.set_iteration(done + i);
      w.run();
    }
    {
      // Outside the timed loop, so publishing it costs the timed path nothing.
      const BlockingCall call(scope, &t, "in the device synchronisation after warm-up");
      t.memory().synchronize();
    }
    done += n;
    const auto end = Clock::now();
    w.set_warmup_mean_us(micros(end - t0) / static_cast<double>(n - from));
    return std::chrono::duration<double>(end - began).count();
  };
  double spent = round(count);
  for (int k = 1; control != nullptr && min_s > 0 && k < kMaxRounds; ++k) {
    std::vector<double> slowest{spent};
    control->max_in_place(slowest);
    if (slowest.front() >= min_s) break;
    spent += round(static_cast<long>(count) << k);
  }
}

bool keep_going(const std::vector<Timing>& timings, const TimingSpec& spec, long done, long cap, int ops_per_sample,
                double wall_s_each) {
  if (!spec.adaptive || done >= cap) return false;
  for (const auto& t : timings) {
    const double op_s = std::accumulate(t.samples_us.begin(), t.samples_us.end(), 0.0) * ops_per_sample * 1e-6;
    const double spent_s = std::max(op_s, wall_s_each);
    if (spent_s < spec.min_time_s) return true;
    if (spec.max_noise > 0 && relative_ci95(t.samples_us) > spec.max_noise) return true;
  }
  return false;
}

namespace {

// The start window is idle time between samples, and an op after idle is slower on this
// machine: 8 B allreduce, 2 ranks, plain MPI clock-started (collbench_raw --method clock) read
// 1.0-1.1x the back-to-back loop with a 2-3 us window, 1.2-1.35x with 10 us, 2-2.5x with 30 us
// (docs/machine.md). So the first window is twice the op plus 1 us (the sample's own
// bookkeeping), at least 2 us; late starts widen it.
constexpr double kMinWindowUs = 3;    // narrowest start window
constexpr double kWindowSlackUs = 1;  // added to twice the op's warm-up time for the first window
constexpr double kLeadUs = 100;       // rank 0 announces the first start this far ahead (+ a window)
constexpr int kMaxClockPasses = 6;    // passes over a round's missing samples before falling back
constexpr int kStickyFallbacks = 2;   // after this many points in a row fell back, skip the clock ...
constexpr long kRetryClockEvery = 8;  // ... except on every 8th point
constexpr double kRefreshClockS = 1;  // re-estimate clock offsets when older (drift fit)

// Takes the samples of one round: passes over every workload's missing samples (A B A B ...),
// each sample barrier- or clock-started, one max-over-ranks reduction per pass. Under clock
// start a sample some rank entered late is counted and run again; too many late starts in a
// pass widen the window; past the cap the point falls back to the barrier.
class Sampler {
 public:
  Sampler(Transport& t, Control& c, std::span<Workload* const> ws, const std::vector<CallInfo>& calls,
          std::vector<Timing>& out, std::size_t& current, int ops, const TimingSpec& spec)
      : t_(t), c_(c), ws_(ws), calls_(calls), out_(out), current_(current), ops_(ops),
        max_window_factor_(spec.max_window_factor), max_window_growth_us_(spec.max_window_growth_us),
        per_rank_(spec.per_rank), local_sum_(ws.size(), 0.0), local_n_(ws.size(), 0) {
    if (per_rank_)
      for (auto& o : out_) {
        o.rank_us.assign(static_cast<std::size_t>(c_.size()), {});
        o.rank_skew_us.assign(static_cast<std::size_t>(c_.size()), {});
      }
  }

  void use_clock(double first_window_us) {
    clock_ = true;
    window_us_ = first_window_us0_ = std::max(kMinWindowUs, first_window_us);
  }
  // `planned`: the barrier start was chosen for the op (a long one), not forced by late starts.
  void skip_clock(const std::string& why, bool planned = false) {
    fallback_ = why;
    planned_ = planned;
  }
  bool planned() const { return planned_; }
  bool clock() const { return clock_; }
  double window_us() const { return window_us_; }
  const std::optional<std::string>& fallback() const { return fallback_; }

  // `need` more samples of each workload; false when the clock start fell back to the barrier
  // during this round (the caller starts the point's samples again).
  bool collect(std::vector<long> need) {
    int passes = 0;
    while (std::any_of(need.begin(), need.end(), [](long n) { return n > 0; })) {
      const bool was_clock = clock_;
      pass(need);
      if (was_clock && !clock_) return false;
      if (clock_ && mostly_late_ >= 2) {  // two passes in a row with three quarters late
        fall_back("most starts late in two passes in a row");
        return false;
      }
      if (clock_ && ++passes >= kMaxClockPasses && std::any_of(need.begin(), need.end(), [](long n) { return n > 0; })) {
        fall_back("still late after " + std::to_string(passes) + " passes");
        return false;
      }
    }
    return true;
  }

  // Forgets the samples taken so far (after a fallback): late counts stay.
  void reset() {
    for (auto& o : out_) {
      o.samples_us.clear();
      o.start_skew_us.clear();
      for (auto& v : o.rank_us) v.clear();
      for (auto& v : o.rank_skew_us) v.clear();
    }
    std::fill(local_sum_.begin(), local_sum_.end(), 0.0);
    std::fill(local_n_.begin(), local_n_.end(), 0);
  }

  // Each rank's mean per op over the kept samples, averaged over ranks, per workload.
  std::vector<double> rank_averaged_means() {
    std::vector<double> v(ws_.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = local_n_[i] ? local_sum_[i] / static_cast<double>(local_n_[i]) : 0;
    c_.sum_in_place(v);
    for (double& x : v) x /= c_.size();
    return v;
  }

 private:
  void fall_back(const std::string& why) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "clock start: %ld late starts, window %.1f us (first %.1f us, cap %.1f us): %s; barrier used",
                  late_, window_us_, first_window_us0_, window_cap_us(), why.c_str());
    fallback_ = buf;
    clock_ = false;
  }

  void pass(std::vector<long>& need) {
    slots_.clear();
    const long most = *std::max_element(need.begin(), need.end());
    for (long i = 0; i < most; ++i) {
      const auto round = static_cast<std::ptrdiff_t>(slots_.size());
      for (std::size_t w = 0; w < ws_.size(); ++w)
        if (need[w] > i) slots_.push_back(w);
      // Each round of interleaved workloads in its own order, so none always runs right after
      // the same one: Open MPI's library collectives slow the call after them (docs/machine.md),
      // which a fixed A B C order charged to one algorithm every time. The generator is seeded
      // alike and every pass is collective, so all ranks draw the same order.
      std::shuffle(slots_.begin() + round, slots_.end(), order_);
    }
    stamps_.assign(slots_.size(), SampleStamp{});
    index_.assign(ws_.size(), 0);
    for (std::size_t w = 0; w < ws_.size(); ++w) index_[w] = static_cast<long>(out_[w].samples_us.size());
    ClockSync& clk = c_.clock();
    const double first = clock_ ? c_.broadcast(c_.rank() == 0 ? clk.global_now() + lead_us_ + window_us_ : 0.0) : 0.0;
    for (std::size_t k = 0; k < slots_.size(); ++k) {
      const std::size_t w = current_ = slots_[k];
      if (clock_)
        stamps_[k] = time_sample_stamped(t_, *ws_[w], calls_[w], index_[w]++, ops_, SampleStart::clock,
                                         clk.raw_of_global(first + static_cast<double>(k) * window_us_));
      else
        stamps_[k] = time_sample_stamped(t_, *ws_[w], calls_[w], index_[w]++, ops_, SampleStart::barrier);
    }
    // One reduction: per slot the max time, late on any rank, latest and (negated) earliest start, lateness.
    buf_.resize(slots_.size() * 5);
    for (std::size_t k = 0; k < slots_.size(); ++k) {
      const double g = clk.global_of_raw(stamps_[k].begin_raw_us);
      double* b = &buf_[k * 5];
      b[0] = stamps_[k].us;
      b[1] = stamps_[k].late ? 1 : 0;
      b[2] = g;
      b[3] = -g;
      b[4] = stamps_[k].lateness_us;
    }
    c_.max_in_place(buf_);
    // --per-rank: every rank's own time and start (rank 0's clock) of every slot, to every rank.
    if (per_rank_) {
      mine_.resize(slots_.size() * 2);
      for (std::size_t k = 0; k < slots_.size(); ++k) {
        mine_[k * 2] = stamps_[k].us;
        mine_[k * 2 + 1] = clk.global_of_raw(stamps_[k].begin_raw_us);
      }
      all_ = c_.all_gather(mine_);
    }
    // Late starts come in runs: after one long delay the following slots are late too, each
    // less so (the rank catches up by about a window minus the op per slot). A run that catches
    // up is one delay (one vote to widen); one that does not says the window is too narrow
    // (every slot of it votes).
    long late = 0, votes = 0;
    std::size_t run_from = 0;
    bool in_run = false;
    lateness_.clear();
    const auto end_run = [&](std::size_t to) {  // the run is slots [run_from, to)
      if (!in_run) return;
      in_run = false;
      const double first = buf_[run_from * 5 + 4], last = buf_[(to - 1) * 5 + 4];
      const auto n = static_cast<double>(to - 1 - run_from);
      const bool catching_up = to - run_from == 1 || last < first - 0.1 * window_us_ * n;
      votes += catching_up ? 1 : static_cast<long>(to - run_from);
      lateness_.push_back(catching_up ? 0.0 : (last - first) / n);  // how much later each slot than the one before
    };
    if (clock_ && buf_.size() >= 5 && buf_[1] > 0) lead_us_ = std::min(2 * lead_us_, 1e5);  // first start too soon after the announcement
    for (std::size_t k = 0; k < slots_.size(); ++k) {
      const std::size_t w = slots_[k];
      const double* b = &buf_[k * 5];
      if (b[1] > 0) {
        ++late;
        ++out_[w].late;
        if (!in_run) {
          in_run = true;
          run_from = k;
        }
        continue;
      }
      end_run(k);
      if (need[w] <= 0) continue;
      --need[w];
      out_[w].samples_us.push_back(b[0]);
      out_[w].start_skew_us.push_back(std::max(0.0, b[2] + b[3]));
      if (per_rank_) {
        // Relative to the agreed start (clock), else to the earliest rank's start (-b[3]).
        const double ref = clock_ ? first + static_cast<double>(k) * window_us_ : -b[3];
        const std::size_t stride = slots_.size() * 2;
        for (std::size_t r = 0; r < out_[w].rank_us.size(); ++r) {
          // When the rank finished, from the reference start, per op: clock-started times already
          // run from the agreed start; a barrier-started rank's own time runs from its own exit,
          // which would make the first rank out of the barrier (waiting longest inside the op)
          // look slowest, so its start skew is added.
          const double skew = all_[r * stride + k * 2 + 1] - ref;
          out_[w].rank_us[r].push_back(all_[r * stride + k * 2] + (clock_ ? 0.0 : skew / ops_));
          out_[w].rank_skew_us[r].push_back(skew);
        }
      }
      local_sum_[w] += stamps_[k].us;
      ++local_n_[w];
    }
    end_run(slots_.size());
    late_ += late;
    mostly_late_ = late * 4 >= 3 * static_cast<long>(slots_.size()) ? mostly_late_ + 1 : 0;
    if (clock_ && votes * 4 > static_cast<long>(slots_.size())) {  // more than a quarter: widen
      // by twice the typical (median) growth of lateness per slot, at least doubling
      std::nth_element(lateness_.begin(), lateness_.begin() + static_cast<long>(lateness_.size() / 2), lateness_.end());
      window_us_ = std::max(2 * window_us_, window_us_ + 2 * lateness_[lateness_.size() / 2]);
      if (window_us_ > window_cap_us()) fall_back("window past its cap");
    }
  }

  double window_cap_us() const {
    return std::min(max_window_factor_ * first_window_us0_, first_window_us0_ + max_window_growth_us_);
  }

  Transport& t_;
  Control& c_;
  std::span<Workload* const> ws_;
  const std::vector<CallInfo>& calls_;
  std::vector<Timing>& out_;
  std::size_t& current_;
  int ops_;
  double max_window_factor_, max_window_growth_us_;
  bool per_rank_;
  std::vector<double> mine_, all_;  // --per-rank: this rank's (time, start) per slot; every rank's
  bool clock_ = false;
  double window_us_ = 0, first_window_us0_ = 0;
  long late_ = 0;
  double lead_us_ = kLeadUs;
  int mostly_late_ = 0;
  std::optional<std::string> fallback_;
  bool planned_ = false;
  std::vector<double> local_sum_;
  std::vector<long> local_n_;
  std::vector<std::size_t> slots_;
  std::mt19937 order_{0x636f6c6c};  // the interleaving order; the same sequence on every rank
  std::vector<SampleStamp> stamps_;
  std::vector<long> index_;
  std::vector<double> buf_;
  std::vector<double> lateness_;
};

// The other reference tool's convention, from one extra short round per workload after the
// timed samples, each rank's mean per op: per_iter/interleaved get one nccl-tests batch (ops
// back to back after a barrier), batch gets OSU's calls (each after a barrier). Returns the
// rank average per workload.
std::vector<double> convention_round(Transport& t, Control& control, std::span<Workload* const> ws,
                                     const std::vector<CallInfo>& calls, int ops, bool batch, long first_index,
                                     std::size_t& current) {
  std::vector<double> mean(ws.size(), 0.0);
  for (current = 0; current < ws.size(); ++current) {
    if (batch) {
      for (int k = 0; k < ops; ++k)
        mean[current] += time_sample(t, *ws[current], calls[current], first_index + k, 1, SampleStart::barrier) / ops;
    } else {
      mean[current] = time_sample(t, *ws[current], calls[current], first_index, ops, SampleStart::barrier);
    }
  }
  control.sum_in_place(mean);
  for (double& x : mean) x /= control.size();
  return mean;
}

}  // namespace

Calibration calibrate(Transport& t, Control& control) {
  constexpr int kClockRounds = 30, kBarrierReps = 300, kReads = 100000;
  Calibration c;
  c.clock_sync_rounds = kClockRounds;
  c.clock_sync_error_us = control.clock().estimate(kClockRounds);
  c.clock_offset_us.assign(static_cast<std::size_t>(control.size()), 0.0);
  c.clock_offset_us[static_cast<std::size_t>(control.rank())] = control.clock().offset_us(control.clock().local_now());
  control.sum_in_place(c.clock_offset_us);
  for (int shared : control.clock().shares_root_clock()) c.clock_shared.push_back(shared != 0);
  // Timer: the smallest non-zero step seen between consecutive reads, and the mean read cost.
  auto prev = Clock::now();
  const auto first = prev;
  Clock::duration step = Clock::duration::max();
  for (int i = 0; i < kReads; ++i) {
    const auto now = Clock::now();
    if (now != prev) step = std::min(step, now - prev);
    prev = now;
  }
  c.timer_read_ns = std::chrono::duration<double, std::nano>(prev - first).count() / kReads;
  c.timer_resolution_ns = step == Clock::duration::max() ? 0 : std::chrono::duration<double, std::nano>(step).count();
  // Empty barrier of the measured transport (what --sync barrier waits in before each sample).
  // Not a measured op: bounded like the control plane, so a --timeout meant for the data path
  // (1 ms under oversubscription, as in the timeout test) does not fire here first.
  CallScope& scope = t.scope();
  const auto data_timeout = scope.timeout();
  scope.set_timeout(ControlCall::timeout_for(data_timeout, control.rank()));
  scope.set_call({"barrier", "calibration", 0, -1, "calibration"});
  std::vector<double> us(kBarrierReps);
  t.barrier();
  for (int i = 0; i < kBarrierReps; ++i) {
    scope.set_iteration(i);
    const auto t0 = Clock::now();
    t.barrier();
    us[static_cast<std::size_t>(i)] = micros(Clock::now() - t0);
  }
  scope.set_timeout(data_timeout);
  std::vector<double> med{summarize(us).p50};
  control.max_in_place(med);
  c.barrier_us = med.front();
  c.barrier_reps = kBarrierReps;
  std::vector<double> res{c.timer_resolution_ns, c.timer_read_ns};
  control.max_in_place(res);
  c.timer_resolution_ns = res[0];
  c.timer_read_ns = res[1];
  return c;
}

std::vector<Timing> time_workloads(Transport& t, Control& control, std::span<Workload* const> ws, const TimingSpec& spec) {
  const Rounds r = rounds_for(spec);
  const bool batch = spec.mode == TimingMode::batch;
  std::vector<Timing> out(ws.size());
  std::vector<CallInfo> calls;
  for (Workload* w : ws) {
    calls.push_back(w->call());
    calls.back().phase = "timed";
  }
  std::size_t current = 0;
  long done = 0;
  Sampler sampler(t, control, ws, calls, out, current, r.ops_per_sample, spec);
  const auto began = Clock::now();
  try {
    control.clock().refresh(kRefreshClockS);  // start skews are on rank 0's clock, whatever the sync
    ClockSync& clk = control.clock();
    const bool clock_asked = !batch && spec.sync == SyncMethod::clock;
    double op_us = 0;  // the longest workload's warm-up mean, max over ranks
    if (clock_asked) {
      std::vector<double> warm;
      for (Workload* w : ws) warm.push_back(w->warmup_mean_us());
      control.max_in_place(warm);
      op_us = *std::max_element(warm.begin(), warm.end());
    }
    const bool long_op = spec.clock_start_below_us > 0 && op_us >= spec.clock_start_below_us;
    const bool skip_clock = !long_op && clk.fallbacks_in_a_row >= kStickyFallbacks &&
                            ++clk.points_since_fallback_check % kRetryClockEvery != 0;
    if (clock_asked && long_op) {
      char why[200];
      std::snprintf(why, sizeof why,
                    "op %.1f us >= %.0f x the barrier (%.2f us): barrier start, its exit skew is under 1 %% of the op "
                    "(a clock window's idle gap would slow it)",
                    op_us, kClockStartBarrierFactor, spec.clock_start_below_us / kClockStartBarrierFactor);
      sampler.skip_clock(why, true);
    } else if (clock_asked && skip_clock) {
      sampler.skip_clock("clock start fell back on the previous " + std::to_string(clk.fallbacks_in_a_row) +
                         " points; barrier used (the clock is tried again every " + std::to_string(kRetryClockEvery) +
                         "th point)");
    } else if (clock_asked) {
      sampler.use_clock(2 * op_us + kWindowSlackUs);
    }
    long round = r.first;
    while (true) {
      if (!sampler.collect(std::vector<long>(ws.size(), round))) {  // fell back: start again, barrier-started
        sampler.reset();
        done = 0;
        round = r.first;
        continue;
      }
      done += round;
      const double wall_s_each =
          std::chrono::duration<double>(Clock::now() - began).count() / static_cast<double>(ws.size());
      const int more =
          control.broadcast(control.rank() == 0 && keep_going(out, spec, done, r.cap, r.ops_per_sample, wall_s_each));
      if (!more) break;
      round = std::min(done, r.cap - done);  // double the samples each round
    }
    if (clock_asked && !skip_clock && !long_op) {
      clk.fallbacks_in_a_row = sampler.clock() ? 0 : clk.fallbacks_in_a_row + 1;
      clk.points_since_fallback_check = 0;
    }
    const std::vector<double> main_avg = sampler.rank_averaged_means();
    const int conv_ops = std::min(spec.convention_ops, spec.iters);
    std::vector<double> conv_avg;
    if (conv_ops > 0) conv_avg = convention_round(t, control, ws, calls, conv_ops, batch, done, current);
    for (std::size_t i = 0; i < out.size(); ++i) {
      Timing& o = out[i];
      o.ops = done * r.ops_per_sample;
      o.sync = sampler.clock() ? SyncMethod::clock : SyncMethod::barrier;
      o.sync_fallback = sampler.fallback();
      o.sync_planned = sampler.planned();
      if (sampler.clock()) o.window_us = sampler.window_us();
      (batch ? o.nccl_avg_us : o.osu_avg_us) = main_avg[i];
      if (conv_ops > 0) (batch ? o.osu_avg_us : o.nccl_avg_us) = conv_avg[i];
    }
  } catch (const NotSupported& e) {
    throw WorkloadNotSupported(e, current);
  }
  return out;
}

}  // namespace collbench
