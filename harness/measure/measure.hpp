#pragma once
// The timing engine, independent of what is timed: warm-up, then samples of
// barrier -> t0 -> op (-> memory().synchronize()) -> t1, the per-sample MAX over ranks
// (one reduction after each round, never inside it) and adaptive stopping decided by rank 0.
// Collectives (collective_point.cpp) and later point-to-point tests plug in as Workloads.
#include <span>
#include <string>
#include <vector>

#include "collectives/transport/transport.hpp"
#include "harness/run/nvtx.hpp"
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
  const CallInfo& call() const { return call_; }
  const nvtx::PointLabels& labels() const { return labels_; }

 private:
  CallInfo call_;
  nvtx::PointLabels labels_;
};

struct TimingSpec {
  TimingMode mode = TimingMode::per_iter;
  int iters = 20;  // per_iter: first round of samples; batch: ops per sample
  int warmup = 5;
  bool adaptive = false;
  double min_time_s = 0;
  double max_noise = 0;
  int max_iters = 1000;  // cap on timed ops when adaptive
};
TimingSpec timing_spec(const Settings& s);

struct Timing {
  std::vector<double> samples_us;  // per sample, max over ranks (batch: mean per op of a batch)
  long ops = 0;                    // timed operations in total (the JSON "iters")
};

// `count` untimed calls (phase "warmup").
void warm_up(Transport& t, Workload& w, int count);

// How the ranks of a sample start: together, after a barrier (collectives), or back to back,
// each sample synchronised by the previous one's reply (point-to-point, as OSU does: a
// barrier's exit skew is of the order of the latency measured).
enum class SampleStart { barrier, back_to_back };

// The one place a call is timed: scope (call, phase "timed", iteration) and the start come
// before t0 and the NVTX range sits outside [t0, t1], so nothing but the op (×ops, then the
// device sync) is on the clock. Returns microseconds per op on this rank.
double time_sample(Transport& t, Workload& w, const CallInfo& timed_call, long index, int ops, SampleStart start);

// A workload threw NotSupported while being timed: which one, and why.
class WorkloadNotSupported : public NotSupported {
 public:
  WorkloadNotSupported(const NotSupported& e, std::size_t index) : NotSupported(e), index(index) {}
  std::size_t index;
};

// Times the workloads; collective over all ranks. Several workloads are interleaved
// round-robin sample by sample (A B A B ...); one is timed per iteration or in batches.
std::vector<Timing> time_workloads(Transport& t, Control& control, std::span<Workload* const> ws, const TimingSpec& spec);

// Rank 0's decision after a round: another round? (pure; exposed for tests)
bool keep_going(const std::vector<Timing>& timings, const TimingSpec& spec, long samples_done, long sample_cap,
                int ops_per_sample);

}  // namespace collbench
