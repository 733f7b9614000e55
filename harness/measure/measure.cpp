#include "harness/measure/measure.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "harness/run/control.hpp"
#include "harness/measure/stats.hpp"

namespace collbench {
namespace {

using Clock = std::chrono::steady_clock;

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

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

// The max over ranks of samples [from, from+n) of every workload, in one reduction.
void reduce_round(Control& control, std::vector<Timing>& out, long from, long n) {
  std::vector<double> buf;
  buf.reserve(out.size() * static_cast<std::size_t>(n));
  for (const auto& t : out) buf.insert(buf.end(), t.samples_us.begin() + from, t.samples_us.begin() + from + n);
  control.max_in_place(buf);
  auto it = buf.begin();
  for (auto& t : out) {
    std::copy(it, it + n, t.samples_us.begin() + from);
    it += n;
  }
}

}  // namespace

double time_sample(Transport& t, Workload& w, const CallInfo& timed_call, long index, int ops, SampleStart start) {
  // Interleaved workloads switch calls; set_call copies only strings that changed (none when
  // one workload is timed), so the per-sample update is the iteration store.
  CallScope& scope = t.scope();
  scope.set_call(timed_call);
  scope.set_iteration(index);
  if (start == SampleStart::barrier) t.barrier();
  MemorySpace& m = t.memory();
  nvtx::Range r(ops == 1 ? w.labels().iter : w.labels().batch, index);
  const auto t0 = Clock::now();
  for (int k = 0; k < ops; ++k) w.run();
  m.synchronize();
  return micros(Clock::now() - t0) / ops;
}

TimingSpec timing_spec(const Settings& s) {
  return {s.mode(), s.iters, s.warmup, s.adaptive(), s.min_time_s, s.max_noise, s.max_iters};
}

void warm_up(Transport& t, Workload& w, int count) {
  if (count <= 0) return;
  CallScope& scope = t.scope();
  scope.set_call(w.call());
  scope.set_phase("warmup");
  nvtx::Range r(w.labels().warmup);
  for (int i = 0; i < count; ++i) {
    scope.set_iteration(i);
    w.run();
  }
  t.memory().synchronize();
}

bool keep_going(const std::vector<Timing>& timings, const TimingSpec& spec, long done, long cap, int ops_per_sample) {
  if (!spec.adaptive || done >= cap) return false;
  for (const auto& t : timings) {
    const double spent_s = std::accumulate(t.samples_us.begin(), t.samples_us.end(), 0.0) * ops_per_sample * 1e-6;
    if (spent_s < spec.min_time_s) return true;
    if (spec.max_noise > 0 && relative_ci95(t.samples_us) > spec.max_noise) return true;
  }
  return false;
}

std::vector<Timing> time_workloads(Transport& t, Control& control, std::span<Workload* const> ws, const TimingSpec& spec) {
  const Rounds r = rounds_for(spec);
  std::vector<Timing> out(ws.size());
  std::vector<CallInfo> calls;
  for (Workload* w : ws) {
    calls.push_back(w->call());
    calls.back().phase = "timed";
  }
  long done = 0, round = r.first;
  std::size_t current = 0;
  try {
    while (true) {
      for (auto& o : out) o.samples_us.resize(static_cast<std::size_t>(done + round));  // no allocation while timing
      for (long i = done; i < done + round; ++i)
        for (current = 0; current < ws.size(); ++current)
          out[current].samples_us[i] = time_sample(t, *ws[current], calls[current], i, r.ops_per_sample, SampleStart::barrier);
      reduce_round(control, out, done, round);
      done += round;
      const int more = control.broadcast(control.rank() == 0 && keep_going(out, spec, done, r.cap, r.ops_per_sample));
      if (!more) break;
      round = std::min(done, r.cap - done);  // double the samples each round
    }
  } catch (const NotSupported& e) {
    throw WorkloadNotSupported(e, current);
  }
  for (auto& o : out) o.ops = done * r.ops_per_sample;
  return out;
}

}  // namespace collbench
