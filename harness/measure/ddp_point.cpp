#include "harness/measure/ddp_point.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "collectives/verify/check.hpp"
#include "harness/plan/auto_algos.hpp"
#include "harness/runtime/control.hpp"
#include "harness/runtime/memcheck.hpp"

namespace collbench {
namespace {

using Clock = std::chrono::steady_clock;


// One training step's gradient sync with one algorithm (auto: each bucket's own choice): every
// bucket all-reduced in turn. Each bucket's own time is kept per call (every call on every rank
// alike, so the lists line up across ranks); forget() drops the warm-up's.
class DdpStep final : public Workload {
 public:
  DdpStep(Transport& t, std::vector<const AlgoEntry*> entries, std::vector<CollArgs> args, CallInfo call,
          const std::string& label)
      : Workload(std::move(call), label), t_(t), entries_(std::move(entries)), args_(std::move(args)),
        bucket_us_(args_.size()) {}
  void run() override {
    MemorySpace& m = t_.memory();
    for (std::size_t k = 0; k < args_.size(); ++k) {
      const auto t0 = Clock::now();
      run_entry(*entries_[k], t_, args_[k]);
      m.synchronize();  // a device bucket's time is its own (a no-op on the host)
      bucket_us_[k].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  }
  void forget() {
    for (auto& v : bucket_us_) v.clear();
  }
  const std::vector<std::vector<double>>& bucket_us() const { return bucket_us_; }

 private:
  Transport& t_;
  std::vector<const AlgoEntry*> entries_;
  std::vector<CollArgs> args_;
  std::vector<std::vector<double>> bucket_us_;
};

verify::Case bucket_case(const DdpBlock& b, const workload::Bucket& k, const Transport& t) {
  return {Op::allreduce, k.dtype, b.redop, static_cast<std::size_t>(k.count), 0, t.rank(), t.size(), false};
}

// Per bucket: the max over ranks of each timed call, then the p50 over calls.
std::vector<double> bucket_p50s(Control& control, const DdpStep& w) {
  const auto& per = w.bucket_us();
  std::vector<double> flat;
  for (const auto& v : per) flat.insert(flat.end(), v.begin(), v.end());
  control.max_in_place(flat);
  std::vector<double> out;
  std::size_t at = 0;
  for (const auto& v : per) {
    std::vector<double> one(flat.begin() + static_cast<std::ptrdiff_t>(at),
                            flat.begin() + static_cast<std::ptrdiff_t>(at + v.size()));
    at += v.size();
    out.push_back(one.empty() ? 0.0 : summarize(one).p50);
  }
  return out;
}

PointResult::Ddp ddp_info(const DdpBlock& b) {
  PointResult::Ddp d;
  d.model = b.model.name;
  d.model_source = b.model.source;
  d.grad_order = b.settings.grad_order.empty() ? "reverse_registration" : "file:" + b.settings.grad_order;
  d.param_count = b.model.count();
  d.param_tensors = b.model.params.size();
  d.bucket_cap_mb = b.settings.bucket_cap_mb;
  d.first_bucket_cap_mb = static_cast<double>(kDdpFirstBucketBytes) / (1 << 20);
  d.compute_ms = b.settings.compute_ms;
  if (d.compute_ms) d.compute_source = "--compute-ms";
  if (b.profile) {
    d.compute_ms = std::array<double, 3>{b.profile->forward_ms, b.profile->backward_ms(), b.profile->optimizer_ms};
    d.compute_source = "profile:" + b.settings.compute_profile;
    for (const auto& k : b.buckets) {
      double ms = 0;
      for (std::size_t i : k.params) ms += b.profile->param_backward_ms[i];
      d.bucket_backward_ms.push_back(ms);
    }
  }
  for (const auto& k : b.buckets) {
    PointResult::DdpBucket out;
    out.tensors = k.params.size();
    out.count = k.count;
    out.bytes = k.bytes;
    out.dtype = dtype_name(k.dtype);
    out.params = k.params;
    if (!k.params.empty()) {
      out.first = b.model.params[k.params.front()].name;
      out.last = b.model.params[k.params.back()].name;
    }
    d.buckets.push_back(std::move(out));
  }
  return d;
}

// The entry each bucket runs: the algorithm's, or for auto the tuning file's choice at that
// bucket's size and dtype (recorded per bucket: chosen, tuning).
std::vector<const AlgoEntry*> bucket_entries(PointEnv& env, const DdpBlock& b, const AlgoEntry& e, PointResult& r) {
  std::vector<const AlgoEntry*> out(b.buckets.size(), &e);
  if (&e != &auto_entry(Op::allreduce) || !env.autos) return out;
  for (std::size_t k = 0; k < b.buckets.size(); ++k) {
    const CollectiveBlock one{Op::allreduce, {&e}, b.buckets[k].dtype, b.redop, std::nullopt, false, b.settings};
    out[k] = env.autos->resolve(one, b.buckets[k].bytes).algos.front();
    if (const TunedChoice* c = env.autos->choice_of(*out[k])) {
      r.ddp->buckets[k].chosen = c->algo;
      r.ddp->buckets[k].tuning = c->origin;
    }
  }
  return out;
}

// The one dtype of the gradients, or "mixed" (a model file with several and no --grad-dtype).
std::string grads_dtype(const DdpBlock& b) {
  for (const auto& k : b.buckets)
    if (k.dtype != b.buckets.front().dtype) return "mixed";
  return b.buckets.empty() ? "float32" : std::string(dtype_name(b.buckets.front().dtype));
}

// Fills every bucket's send with the verification inputs, runs one step, checks every bucket.
void verify_step(PointEnv& env, const DdpBlock& b, DdpStep& w, Buffer& send, Buffer& recv, const DdpLayout& at,
                 PointResult& r) {
  Transport& t = env.transport;
  MemorySpace& m = t.memory();
  t.scope().set_call(w.call());
  t.scope().set_phase("verify");
  for (std::size_t k = 0; k < b.buckets.size(); ++k)
    verify::fill(m, bucket_case(b, b.buckets[k], t), static_cast<char*>(send.data()) + at.offsets[k],
                 static_cast<char*>(recv.data()) + at.offsets[k]);
  w.run();
  std::uint64_t wrong = 0;
  for (std::size_t k = 0; k < b.buckets.size(); ++k) {
    const verify::Check c = verify::check(m, bucket_case(b, b.buckets[k], t), static_cast<char*>(send.data()) + at.offsets[k],
                                          static_cast<char*>(recv.data()) + at.offsets[k]);
    if (c.wrong > 0 && wrong == 0 && !env.quiet)
      std::fprintf(stderr, "collbench: rank %d: ddp %s/%s bucket %zu: %zu wrong elements, first at index %zu: expected %g, got %g\n",
                   t.rank(), b.model.name.c_str(), r.algo.c_str(), k, c.wrong, c.first_index, c.expected, c.got);
    wrong += c.wrong;
  }
  r.wrong = env.control.sum(wrong);
  r.checked = true;
}

}  // namespace

std::vector<PointResult> measure_ddp(PointEnv& env, const DdpBlock& b) {
  Transport& t = env.transport;
  t.scope().set_timeout(std::chrono::milliseconds(static_cast<long long>(b.settings.timeout_s * 1000)));
  const DdpLayout at = ddp_layout(b);
  SizePoint s{b.grad_bytes(), 0, 0};
  for (const auto& k : b.buckets) s.total_count += k.count;
  s.chunk_count = s.total_count;

  std::vector<PointResult> results;
  for (const AlgoEntry* e : b.algos) {
    PointResult r = identity_result(env, "allreduce", e->algo, b.buckets.empty() ? DType::float32 : b.buckets.front().dtype,
                                    s, b.settings.warmup, b.settings.mode());
    r.dtype = grads_dtype(b);
    r.redop = std::string(redop_name(b.redop));
    r.sync = b.settings.sync;
    r.ddp = ddp_info(b);
    results.push_back(std::move(r));
  }
  if (auto why = env.control.agree_error(
          memory_shortfall(ddp_memory_need(b, t.size()), env.topology.ranks_on_my_node, available_host_memory())))
    for (auto& r : results) skip(r, *why);
  if (std::all_of(results.begin(), results.end(), [](const PointResult& r) { return r.skipped; })) return results;

  MemorySpace& m = t.memory();
  Buffer send(m, at.total), recv(m, at.total);
  Workspace scratch(m);
  for (std::size_t k = 0; k < b.buckets.size(); ++k)  // realistic data (never denormals) while timed
    verify::fill(m, bucket_case(b, b.buckets[k], t), static_cast<char*>(send.data()) + at.offsets[k],
                 static_cast<char*>(recv.data()) + at.offsets[k]);
  std::vector<std::unique_ptr<DdpStep>> owned;
  std::vector<PointResult*> rs;
  for (std::size_t i = 0; i < b.algos.size(); ++i) {
    std::vector<CollArgs> args;
    const std::vector<const AlgoEntry*> entries = bucket_entries(env, b, *b.algos[i], results[i]);
    for (std::size_t k = 0; k < b.buckets.size(); ++k) {
      CollArgs a;
      a.send = static_cast<const char*>(send.data()) + at.offsets[k];
      a.recv = static_cast<char*>(recv.data()) + at.offsets[k];
      a.count = b.buckets[k].count;
      a.dtype = b.buckets[k].dtype;
      a.op = make_reduce_op(b.redop, a.dtype);
      a.segment_bytes = b.settings.segment_bytes;
      a.workspace = &scratch;
      if (entries[k]->supports && !results[i].skipped)
        if (auto why = entries[k]->supports(t.size(), a)) skip(results[i], "bucket " + std::to_string(k) + ": " + *why);
      args.push_back(a);
    }
    if (results[i].skipped) continue;
    CallInfo call{"allreduce", b.algos[i]->algo, s.bytes, -1, ""};
    owned.push_back(std::make_unique<DdpStep>(t, entries, std::move(args), call,
                                              nvtx::range_name(nvtx::RangeKind::ddp, {{"model", b.model.name},
                                                                                      {"algo", b.algos[i]->algo}})));
    rs.push_back(&results[i]);
  }
  TimingSpec spec = timing_spec(b.settings, env.barrier_us);
  spec.convention_ops = 0;  // the reference tools' conventions are per collective, not per step
  std::vector<std::size_t> warm;  // indices into owned/rs of the steps that warmed up
  for (std::size_t i = 0; i < owned.size(); ++i) {
    if (auto why = warm_up_or_skip(env, *owned[i], spec)) {
      skip(*rs[i], *why);
      continue;
    }
    owned[i]->forget();
    warm.push_back(i);
  }
  // Interleaved: every algorithm's steps alternate (A B A B ...); otherwise one after the other.
  const auto time_steps = [&](std::span<const std::size_t> group) {
    std::vector<Workload*> wl;
    for (std::size_t i : group) wl.push_back(owned[i].get());
    const std::vector<Timing> timings = time_workloads(t, env.control, wl, spec);
    for (std::size_t j = 0; j < group.size(); ++j) {
      PointResult& r = *rs[group[j]];
      record_timing(r, timings[j], Op::allreduce);
      r.ddp->bucket_p50_us = bucket_p50s(env.control, *owned[group[j]]);
    }
  };
  try {
    if (b.settings.interleave) time_steps(warm);
    else
      for (const std::size_t& i : warm) time_steps(std::span<const std::size_t>(&i, 1));
  } catch (const NotSupported& e) {  // an algorithm refused mid-run, on every rank alike
    for (PointResult* r : rs)
      if (!r->time_us && !r->skipped) skip(*r, e.message());
    return results;
  }
  if (b.settings.check)
    for (std::size_t i = 0; i < owned.size(); ++i)
      if (!rs[i]->skipped) verify_step(env, b, *owned[i], send, recv, at, *rs[i]);
  return results;
}

}  // namespace collbench
