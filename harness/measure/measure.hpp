#pragma once
// The timing engine, independent of what is timed: warm-up, then samples of
// start -> op (-> memory().synchronize()) -> t1, the start agreed on rank 0's clock (offsets
// from Control's ClockSync; late starts excluded and run again, the window widened, past a cap
// a fallback to the barrier) or after a barrier; the per-sample MAX over ranks of t1 - start
// (one reduction after each pass, never inside it), the reference tools' rank averages (OSU,
// nccl-tests) and adaptive stopping decided by rank 0.
// Collectives (collective_point.cpp) and later point-to-point tests plug in as Workloads.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collectives/transport/transport.hpp"
#include "harness/runtime/nvtx.hpp"
#include "harness/plan/run_config.hpp"

namespace collbench {

class Control;

// One thing to time, with its buffers ready; run() is exactly the measured call.
class Workload {
 public:
  // `call` names op/algo/bytes in errors (set on the transport's scope before each call);
  // `label` ("allreduce/ring 1048576B") names NVTX ranges.
  Workload(CallInfo call, const std::string& label) : call_(std::move(call)), labels_(label) {}
  virtual ~Workload() = default;
  virtual void run() = 0;
  // `n` calls back to back: a timed sample's loop, one virtual call per sample.
  virtual void run_n(int n) {
    for (int k = 0; k < n; ++k) run();
  }
  // Called before each timed sample's start (before its barrier, or before it waits for the
  // agreed start time), outside the timed region. Tests override it to delay one rank.
  virtual void before_start() {}
  // This rank's mean time per call over the last warm-up (0: none), which sizes the first
  // clock-start window.
  double warmup_mean_us() const { return warmup_mean_us_; }
  void set_warmup_mean_us(double us) { warmup_mean_us_ = us; }
  const CallInfo& call() const { return call_; }
  const nvtx::PointLabels& labels() const { return labels_; }

 private:
  CallInfo call_;
  nvtx::PointLabels labels_;
  double warmup_mean_us_ = 0;
};

struct TimingSpec {
  TimingMode mode = TimingMode::per_iter;
  int iters = 20;  // per_iter: first round of samples; batch: ops per sample
  int warmup = 5;
  bool adaptive = false;
  double min_time_s = 0;
  double max_noise = 0;
  int max_iters = 1000;  // cap on timed ops when adaptive
  SyncMethod sync = SyncMethod::clock;  // per_iter and interleaved samples; batch starts after a barrier
  // Clock start: the start window may widen (when too many starts are late) up to this many
  // times its first width, and by at most max_window_growth_us; past that, or after
  // kMaxClockPasses passes, the point falls back to barrier-started samples. Every sample costs
  // a window, and an op long enough to need a wider one has a barrier exit skew (microseconds)
  // well under 1 % of it (16 MiB allreduce, 2 ranks: the window had grown to 428 ms for a 5 ms op).
  double max_window_factor = 16;
  double max_window_growth_us = 2000;
  // Clock start only for ops shorter than this (their warm-up mean, max over ranks); longer ones
  // are barrier-started (0: never). A clock window leaves each rank idle for about one op
  // between samples, and on this VM an allreduce after 1 ms idle reads 1.3-1.5x the same call
  // back to back (docs/machine.md); a barrier's exit skew is under 1 % of such an op anyway.
  double clock_start_below_us = 0;
  // Warm-up: at least `warmup` calls and at least this long. The first point of a run follows
  // calibration and setup: 200 calls of an 8 B allreduce (0.1 ms) left it 10-25 % slower than
  // the raw loop, 20000 (4 ms) did not (docs/measurement.md).
  double min_warmup_s = 0.005;
  bool per_rank = false;  // keep each rank's own time and start skew per sample (Timing::rank_us)
  // Ops of the extra round, after the timed samples, giving the other reference tool's
  // convention (per_iter: one nccl-tests batch; batch: OSU's barrier-separated calls); 0: none.
  int convention_ops = 10;
};
// Ops at least this many times the calibrated empty barrier are barrier-started (see above).
constexpr double kClockStartBarrierFactor = 100;
// barrier_us: the run's calibrated empty barrier (0: unknown, every op clock-started).
TimingSpec timing_spec(const Settings& s, double barrier_us = 0);

struct Timing {
  std::vector<double> samples_us;  // per sample, max over ranks (batch: mean per op of a batch)
  long ops = 0;                    // timed operations in total (the JSON "iters")
  SyncMethod sync = SyncMethod::barrier;    // how the kept samples were started
  std::optional<std::string> sync_fallback;  // clock was asked for, barrier used: why
  bool sync_planned = false;                 // ... by design (a long op), not because starts were late
  long late = 0;                    // clock: samples some rank entered after their start (excluded, run again)
  std::optional<double> window_us;  // clock: the start window finally used
  std::vector<double> start_skew_us;  // per kept sample: latest rank's start − earliest rank's, rank 0's clock
  std::optional<double> osu_avg_us;   // OSU: each rank's mean per call, averaged over ranks
  std::optional<double> nccl_avg_us;  // nccl-tests: each rank's batch mean per call, averaged over ranks
  // TimingSpec::per_rank: per rank, per kept sample (the order of samples_us), when the rank
  // finished minus the reference start, per op, and when it started minus the reference start;
  // the reference is the agreed start when clock-started, else the earliest rank's start (rank
  // 0's clock). Clock-started: each sample's max over ranks is samples_us' value.
  std::vector<std::vector<double>> rank_us, rank_skew_us;
};

// `count` untimed calls (phase "warmup"); with a control plane, then rounds of twice as many
// until the warm-up has taken min_s on the slowest rank (collective: every rank the same calls).
void warm_up(Transport& t, Workload& w, int count, Control* control = nullptr, double min_s = 0);

// How the ranks of a sample start: together, after a barrier (collectives), or back to back,
// each sample synchronised by the previous one's reply (point-to-point, as OSU does: a
// barrier's exit skew is of the order of the latency measured).
// clock: every rank waits until its clock reaches a start time agreed on rank 0's clock.
enum class SampleStart { barrier, back_to_back, clock };

// What one timed sample saw on this rank (steady_clock microseconds).
struct SampleStamp {
  double us = 0;             // per op: end − start (clock: end − the agreed start, unless late)
  double begin_raw_us = 0;   // when this rank's op began (barrier exit, or the end of its wait)
  double lateness_us = 0;    // clock: how far past the agreed start the rank arrived (0 when on time)
  bool late = false;         // clock: the rank arrived after the agreed start
};

// The one place a call is timed: scope (call, phase "timed", iteration) and the start come
// before t0 and the NVTX range sits outside [t0, t1], so nothing but the op (×ops, then the
// device sync) is on the clock. Returns microseconds per op on this rank.
double time_sample(Transport& t, Workload& w, const CallInfo& timed_call, long index, int ops, SampleStart start);
// The same, with the start stamps; `start_at_raw_us` is the agreed start (SampleStart::clock).
SampleStamp time_sample_stamped(Transport& t, Workload& w, const CallInfo& timed_call, long index, int ops,
                                SampleStart start, double start_at_raw_us = 0);

// A workload threw NotSupported while being timed: which one, and why.
class WorkloadNotSupported : public NotSupported {
 public:
  WorkloadNotSupported(const NotSupported& e, std::size_t index) : NotSupported(e), index(index) {}
  std::size_t index;
};

// Times the workloads; collective over all ranks. Several workloads are interleaved
// round-robin sample by sample (A B A B ...); one is timed per iteration or in batches.
std::vector<Timing> time_workloads(Transport& t, Control& control, std::span<Workload* const> ws, const TimingSpec& spec);

// Collective, once per run before the first point: estimates the clock offsets (Control's
// ClockSync) and measures the timer and an empty barrier of the measured transport.
struct Calibration;
Calibration calibrate(Transport& t, Control& control);

// Rank 0's decision after a round: another round? A workload has spent the larger of its
// samples' op time and `wall_s_each`, rank 0's wall time of the point so far shared among the
// interleaved workloads (a clock-started sample occupies its whole start window, which for small
// ops is many times the op). (pure; exposed for tests)
bool keep_going(const std::vector<Timing>& timings, const TimingSpec& spec, long samples_done, long sample_cap,
                int ops_per_sample, double wall_s_each = 0);

}  // namespace collbench
