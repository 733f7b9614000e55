#include "harness/measure/collective_point.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "collectives/schedules/peer.hpp"
#include "collectives/verify/check.hpp"
#include "harness/results/bandwidth.hpp"
#include "harness/measure/measure.hpp"
#include "harness/runtime/control.hpp"
#include "harness/runtime/cache_pool.hpp"
#include "harness/runtime/call_decorator.hpp"
#include "harness/runtime/memcheck.hpp"

namespace collbench {
namespace {

// The (send, recv) pointers of each buffer set a point's calls use: one set when hot; --cache
// cold: the sets of its pool, in the order the calls take them.
using BufferSets = std::vector<verify::Pointers>;

// The memory of one size's calls: send and recv, filled in place with the verification inputs
// (realistic data, never denormals) and refilled by each checking run, and the algorithms'
// scratch. A point holds these and nothing of the message's size else, but with --interleave
// (hot) each algorithm has its own send and recv (measure_size, runtime/memcheck.hpp buffer_copies).
// Registered (--buffers registered): send and recv are blocks of the node's peer memory, as
// nccl-tests -R registers them, so the shm algorithms read them in place.
// --cache cold: send and recv are pools of `pool.sets` page-aligned sets (cache_pool.hpp), every
// set filled with the same inputs, so any call computes on the verification data.
struct PointBuffers {
  PointBuffers(MemorySpace& m, const verify::Case& c, PeerMemory* registered, const ColdPool& layout)
      : space(registered ? std::optional<PeerMemorySpace>(std::in_place, *registered, m) : std::nullopt),
        pool(layout),
        send(space ? *space : m, layout.sets * layout.send_stride),
        recv(space ? *space : m, layout.sets * layout.recv_stride),
        scratch(m) {
    // fill() does not depend on the set: the first is filled, the others are copies of it
    // (cheaper than generating a cold pool of twice the LLC set by set).
    for (std::uint64_t k = 0; k < layout.sets; ++k) {
      if (k == 0) {
        verify::fill(m, c, send_of(0), recv_of(0));
      } else {
        if (layout.send_stride) m.copy(send_of(k), send_of(0), layout.send_stride);
        if (layout.recv_stride) m.copy(recv_of(k), recv_of(0), layout.recv_stride);
      }
      sets.push_back(verify::arrange(c, send_of(k), recv_of(k)));
    }
  }
  // Set k's buffers as fill() and run_in_place() take them (before arrange()).
  void* send_of(std::uint64_t k) const { return static_cast<char*>(send.data()) + k * pool.send_stride; }
  void* recv_of(std::uint64_t k) const { return static_cast<char*>(recv.data()) + k * pool.recv_stride; }
  std::optional<PeerMemorySpace> space;  // before the buffers: they are freed into it
  ColdPool pool;                         // hot: one set of exactly send + recv
  Buffer send, recv;
  Workspace scratch;
  BufferSets sets;
};

class CollectiveWorkload final : public Workload {
 public:
  // `around`: what wraps each call (call_decorator.hpp; a test fault), or null: the call alone.
  CollectiveWorkload(Transport& t, const AlgoEntry& e, const CollArgs& a, PointBuffers& buffers, CallInfo call,
                     const std::string& label, const CallDecorator* around)
      : Workload(std::move(call), label), t_(t), entry_(e), args_(a), buffers_(buffers), sets_(buffers.sets),
        around_(around),
        // A library entry's bound call stands in for run_entry unless avg wraps it or a
        // decorator wraps the call; bound on a set's first call (a refusal then skips the
        // point as run_entry's would).
        prepared_ok_(e.prepare && runs_as_is(e, a) && !around),
        prepared_(prepared_ok_ ? sets_.size() : 0) {
    args_.send = sets_.front().send;
    args_.recv = sets_.front().recv;
  }
  // Each call on the next set (cold: round-robin through the pool; every rank makes the same
  // calls, so ranks stay on the same set, as registered buffers' peers must).
  void run() override { run_n(1); }
  void run_n(int n) override {
    if (sets_.size() == 1 && prepared_ok_) {  // hot library call: the bound call, nothing else
      if (!prepared_.front()) prepared_.front() = entry_.prepare(t_, args_);
      const PreparedCall& call = prepared_.front();
      for (int k = 0; k < n; ++k) call();
      return;
    }
    for (int k = 0; k < n; ++k) {
      const std::size_t set = next_;
      next_ = next_ + 1 == sets_.size() ? 0 : next_ + 1;
      run_on(set);
    }
  }
  void run_on(std::size_t set) {
    args_.send = sets_[set].send;
    args_.recv = sets_[set].recv;
    if (prepared_ok_) {
      if (!prepared_[set]) prepared_[set] = entry_.prepare(t_, args_);
      return prepared_[set]();
    }
    invoke();
  }
  const AlgoEntry& entry() const { return entry_; }
  PointBuffers& buffers() const { return buffers_; }

 private:
  void invoke() {
    if (!around_) return run_entry(entry_, t_, args_);
    around_->around(entry_.algo, call().point_bytes, [this] { run_entry(entry_, t_, args_); });
  }

  Transport& t_;
  const AlgoEntry& entry_;
  CollArgs args_;
  PointBuffers& buffers_;
  const BufferSets& sets_;
  std::size_t next_ = 0;
  const CallDecorator* around_;
  bool prepared_ok_;
  std::vector<PreparedCall> prepared_;  // per buffer set, bound on first use
};

verify::Case make_case(const CollectiveBlock& b, const SizePoint& s, const Transport& t) {
  return {b.op, b.dtype, b.redop.value_or(RedOp::sum), s.chunk_count, b.root.value_or(0), t.rank(), t.size(), b.in_place};
}

CollArgs make_args(const CollectiveBlock& b, const SizePoint& s) {
  CollArgs a;
  a.count = s.chunk_count;
  a.dtype = b.dtype;
  a.op = make_reduce_op(b.redop.value_or(RedOp::sum), b.dtype);
  a.root = b.root.value_or(0);
  a.segment_bytes = b.settings.segment_bytes;
  return a;
}

// Hot: one set, the buffers' own sizes; cold: the pool aimed at --cache-pool or 2x the LLC.
ColdPool buffer_layout(const CollectiveBlock& b, const verify::Case& c, std::uint64_t llc_bytes) {
  const std::uint64_t send = send_elems(c.op, c.count, c.world) * dtype_size(c.dtype);
  const std::uint64_t recv = recv_elems(c.op, c.count, c.world) * dtype_size(c.dtype);
  if (b.settings.cache_cold) return cold_pool_layout(send, recv, cold_pool_target(b.settings, llc_bytes));
  return ColdPool{1, send, recv};
}

// The peer memory registered buffers live in, or why there is none (the same on every rank):
// the zero-copy algorithms' own check (schedules/peer.hpp), so both refuse alike.
std::optional<std::string> registered_memory(Transport& t, PeerMemory*& pm) {
  try {
    pm = &schedules::peer::memory_for(t, "--buffers registered");
    return std::nullopt;
  } catch (const NotSupported& e) {
    return e.message();
  }
}

// The memcpy rate (bytes copied per second) memory-bound algorithms are judged against: every
// rank copying send -> recv at once in this point's own buffers (verification refills them),
// median of 5 after one untimed, averaged over ranks. Null in place (nothing to copy) or when
// no algorithm of the point has a traffic model; collective.
std::optional<double> point_copy_rate(PointEnv& env, const CollectiveBlock& b, const PointBuffers& buf,
                                      const std::vector<PointResult>& results, const CollArgs& args) {
  bool wanted = false;
  for (std::size_t i = 0; i < b.algos.size(); ++i) wanted |= !results[i].skipped && b.algos[i]->traffic;
  const std::size_t bytes = std::min(buf.pool.send_stride, buf.pool.recv_stride);  // one set's (hot: the buffers)
  MemorySpace& m = env.transport.memory();
  if (!wanted || b.in_place || bytes == 0 || args.send == args.recv || m.kind() != MemoryKind::host)
    return std::nullopt;
  using Clock = std::chrono::steady_clock;
  std::vector<double> s;
  for (int k = 0; k < 6; ++k) {
    env.control.barrier();
    const auto t0 = Clock::now();
    m.copy(buf.recv.data(), buf.send.data(), bytes);
    if (k > 0) s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::nth_element(s.begin(), s.begin() + 2, s.end());
  std::vector<double> rate{static_cast<double>(bytes) / s[2]};
  env.control.sum_in_place(rate);
  return rate.front() / env.control.size();
}

// efficiency = the time the point's necessary data movement takes on the links it crosses,
// divided by the measured p50 (docs/measurement.md "Efficiency"). The zero-copy algorithms (a
// registry traffic model) move data by loads and stores, so their link is memory: their traffic
// at the point's memcpy rate (a copy of B bytes is 2B of traffic). Message algorithms cross the
// intra- and inter-node links, at the rates the run calibrated (bandwidth.hpp link_bound_s).
void record_efficiency(PointResult& r, Op op, const AlgoEntry& e, int n, const CollArgs& a,
                       std::optional<double> copy_rate, const LinkRates* links) {
  if (r.skipped || !r.time_us || r.time_us->p50 <= 0) return;
  std::optional<double> need_s;
  if (e.traffic) {
    // A staged call that read its peers' user buffers by the kernel staged nothing: a registered one's traffic.
    const bool reads_users = r.registered_buffers || (r.peer_claim && r.peer_claim->kernel_copy);
    if (copy_rate) need_s = e.traffic(n, a, reads_users) / (2 * *copy_rate);
  } else if (links) {
    need_s = link_bound_s(op, r.bytes, r.world_size, r.nodes, r.ranks_per_node, *links);
  }
  if (need_s) r.efficiency = *need_s / (r.time_us->p50 * 1e-6);
}

// The zero-copy algorithms' run-time choices: the staged rounds' size, whether the point's calls
// claimed the lines they read and whether they read the peers' user buffers by the kernel
// (schedules/peer.hpp), with what decided it (caches, traffic, the machine's measured probes).
// After the calls, so the peer memory exists (the first call made it, collectively, and probed);
// host memory only (device peer memory never claims).
void record_peer_claim(PointResult& r, const AlgoEntry& e, Transport& t, const CollArgs& a) {
  if (r.skipped || !e.traits.claims || !e.traffic || t.size() < 2 || t.memory().kind() != MemoryKind::host) return;
  const PeerMemory* pm = t.peer_memory();
  if (!pm) return;
  const ClaimChoice c = e.traits.claims(*pm, t.size(), a, r.registered_buffers);
  r.peer_claim = PointResult::PeerClaim{.l1_bytes = pm->l1_bytes(),
                                        .l2_bytes = pm->l2_bytes(),
                                        .llc_bytes = pm->llc_bytes(),
                                        .stage_bytes = schedules::peer::stage_bytes(*pm),
                                        .segment_bytes = c.segment_bytes,
                                        .max_traffic_bytes = schedules::peer::claim_max_traffic(*pm),
                                        .traffic_bytes = c.traffic_bytes,
                                        .claims = c.claims,
                                        .probe = pm->claim_probe().value_or(PeerMemory::ClaimProbe{}),
                                        .kernel_copy = c.kernel_copy,
                                        .kernel_probe =
                                            pm->kernel_copy_probe().value_or(PeerMemory::KernelCopyProbe{}),
                                        .streams = c.streams,
                                        .stream_probe = pm->stream_probe().value_or(PeerMemory::StreamProbe{})};
}

// Which of the pool's sets verification checks: verified_set_count() of them, spread evenly from
// the first to the last. Checking 66 560 sets of a 4 KiB allreduce took 37 s.
std::vector<std::size_t> verified_sets(const ColdPool& pool) {
  std::vector<std::size_t> out;
  const std::size_t sets = pool.sets;
  const std::size_t n = verified_set_count(sets, pool.send_stride + pool.recv_stride);
  for (std::size_t i = 0; i < n; ++i) out.push_back(n == sets || n < 2 ? i : i * (sets - 1) / (n - 1));
  return out;
}

// Refills the timed run's buffers, runs the algorithm once more with the same arguments and
// counts wrong elements over all ranks.
void verify_point(PointEnv& env, CollectiveWorkload& w, const verify::Case& c, PointResult& r) {
  PointBuffers& buf = w.buffers();
  env.transport.scope().set_call(w.call());
  env.transport.scope().set_phase("verify");
  nvtx::Range range(w.labels().verify);
  // Cold: the sets the calls rotated through, each refilled, run once and checked — every set
  // up to verified_set_count(), else that many spread evenly from the first to the last. Every set
  // holds the same inputs at the same (page) alignment, so what could differ between sets is an
  // algorithm keeping something of the previous call's buffers; each checked call runs on
  // another set than the call before it, which shows that as well as checking all of them.
  verify::Outcome o;
  const std::vector<std::size_t> chosen = verified_sets(buf.pool);
  if (r.cache_pool) r.cache_pool->verified_sets = chosen.size();
  for (std::size_t k : chosen) {
    const verify::Outcome one =
        verify::run_in_place(env.transport.memory(), c, buf.send_of(k), buf.recv_of(k), [&] { w.run_on(k); });
    if (one.skipped) {
      o = one;
      break;
    }
    if (one.check.wrong > 0 && o.check.wrong == 0) o.check = one.check;  // the first wrong set's first element
    else o.check.wrong += one.check.wrong;
  }
  if (auto why = env.control.agree_error(o.skipped ? std::optional<std::string>(o.skip_reason) : std::nullopt)) {
    skip(r, *why);
    r.time_us.reset();
    r.algbw_GBps.reset();
    r.busbw_GBps.reset();
    r.start_skew_us.reset();
    r.window_us.reset();
    r.osu_avg_us.reset();
    r.nccl_avg_us.reset();
    r.per_rank.reset();
    if (r.cache_pool) r.cache_pool->verified_sets = 0;
    return;
  }
  if (o.check.wrong > 0 && !env.quiet)
    std::fprintf(stderr, "collbench: rank %d: %s/%s %lluB: %zu wrong elements, first at index %zu: expected %g, got %g\n",
                 c.rank, r.op.c_str(), r.algo.c_str(), static_cast<unsigned long long>(r.bytes), o.check.wrong,
                 o.check.first_index, o.check.expected, o.check.got);
  r.wrong = env.control.sum(o.check.wrong);
  r.checked = true;
}

// One algorithm after the other: per algorithm warm-up, timing, verification.
void run_sequential(PointEnv& env, const CollectiveBlock& b, const verify::Case& c, Workspace& scratch, std::vector<CollectiveWorkload*>& ws,
                    std::vector<PointResult*>& rs) {
  const TimingSpec spec = timing_spec(b.settings, env.barrier_us);
  for (std::size_t i = 0; i < ws.size(); ++i) {
    scratch.release();  // the previous algorithm's scratch never sits beside this one's
    nvtx::Range point(ws[i]->labels().point);
    if (auto why = warm_up_or_skip(env, *ws[i], spec)) {
      skip(*rs[i], *why);
      continue;
    }
    Workload* one[] = {ws[i]};
    try {
      record_timing(*rs[i], time_workloads(env.transport, env.control, one, spec).front(), b.op);
    } catch (const WorkloadNotSupported& e) {
      skip(*rs[i], e.message());
      continue;
    }
    if (b.settings.check) verify_point(env, *ws[i], c, *rs[i]);
  }
}

// All algorithms' samples round-robin at this size (A B A B ...), then each one verified.
void run_interleaved(PointEnv& env, const CollectiveBlock& b, const verify::Case& c, std::vector<CollectiveWorkload*> ws,
                     std::vector<PointResult*> rs) {
  const TimingSpec spec = timing_spec(b.settings, env.barrier_us);
  nvtx::Range group(nvtx::Label(nvtx::range_name(
      nvtx::RangeKind::interleaved, {{"op", std::string(op_name(b.op))}, {"bytes", std::to_string(rs.front()->bytes)}})));
  for (std::size_t i = 0; i < ws.size();) {
    if (auto why = warm_up_or_skip(env, *ws[i], spec)) {
      skip(*rs[i], *why);
      ws.erase(ws.begin() + i);
      rs.erase(rs.begin() + i);
    } else {
      ++i;
    }
  }
  std::vector<Timing> timings;
  while (!ws.empty()) {  // an algorithm refusing mid-way is dropped and the round-robin restarts
    try {
      std::vector<Workload*> base(ws.begin(), ws.end());
      timings = time_workloads(env.transport, env.control, base, spec);
      break;
    } catch (const WorkloadNotSupported& e) {
      skip(*rs[e.index], e.message());
      ws.erase(ws.begin() + static_cast<long>(e.index));
      rs.erase(rs.begin() + static_cast<long>(e.index));
    }
  }
  for (std::size_t i = 0; i < ws.size(); ++i) {
    record_timing(*rs[i], timings[i], b.op);
    if (b.settings.check) verify_point(env, *ws[i], c, *rs[i]);
  }
}

}  // namespace

void skip(PointResult& r, const std::string& why) {
  r.skipped = true;
  r.skip_reason = why;
}

void record_timing(PointResult& r, const Timing& t, Op op) {
  r.time_us = summarize(t.samples_us);
  r.samples_us = t.samples_us;  // already gathered (max over ranks); written when --keep-samples allows
  r.iters = t.ops;
  r.algbw_GBps = algbw_GBps(r.bytes, r.time_us->p50);
  r.busbw_GBps = busbw_GBps(op, r.world_size, *r.algbw_GBps);
  r.sync = t.sync;
  r.sync_fallback = t.sync_fallback;
  r.sync_planned = t.sync_planned;
  r.late = t.late;
  if (!t.start_skew_us.empty()) r.start_skew_us = summarize(t.start_skew_us).p50;
  r.window_us = t.window_us;
  r.osu_avg_us = t.osu_avg_us;
  r.nccl_avg_us = t.nccl_avg_us;
  if (!t.rank_us.empty())
    r.per_rank = PointResult::PerRank{t.rank_us, t.rank_skew_us, t.sync == SyncMethod::clock ? "agreed" : "earliest"};
}

// Warm-up that turns a NotSupported (on every rank alike) into a skip reason.
std::optional<std::string> warm_up_or_skip(PointEnv& env, Workload& w, const TimingSpec& spec) {
  std::optional<std::string> why;
  try {
    warm_up(env.transport, w, spec.warmup, &env.control, spec.min_warmup_s);
  } catch (const NotSupported& e) {
    why = e.message();
  }
  return env.control.agree_error(why);
}

PointResult base_result(const PointEnv& env, const CollectiveBlock& b, const AlgoEntry& e, const SizePoint& s) {
  PointResult r = identity_result(env, op_name(b.op), e.algo, b.dtype, s, b.settings.warmup, b.settings.mode());
  if (b.redop) r.redop = std::string(redop_name(*b.redop));
  r.root = b.root;
  r.in_place = b.in_place;
  r.registered_buffers = b.settings.registered_buffers;
  r.cache_cold = b.settings.cache_cold;
  r.sync = b.settings.mode() == TimingMode::batch ? SyncMethod::barrier : b.settings.sync;  // until measured
  if (const TunedChoice* c = env.autos ? env.autos->choice_of(e) : nullptr) {
    r.chosen = c->algo;
    r.tuning = c->origin;
    r.tuning_match = c->match;
  }
  return r;
}

PointResult identity_result(const PointEnv& env, std::string_view op, std::string_view algo, DType dtype,
                            const SizePoint& s, int warmup, TimingMode mode) {
  PointResult r;
  r.op = op;
  r.algo = algo;
  r.backend = env.backend;
  r.device = env.device;
  r.dtype = dtype_name(dtype);
  r.bytes = s.bytes;
  r.count = s.total_count;
  r.world_size = env.topology.world_size;
  r.nodes = env.topology.nodes;
  r.ranks_per_node = env.topology.ranks_per_node;
  r.warmup = warmup;
  r.mode = mode;
  return r;
}

std::string point_label(const CollectiveBlock& b, const AlgoEntry& e, std::uint64_t bytes) {
  return nvtx::range_name(nvtx::RangeKind::point,
                          {{"op", std::string(op_name(b.op))}, {"algo", e.algo}, {"bytes", std::to_string(bytes)}});
}

std::vector<PointResult> measure_size(PointEnv& env, const CollectiveBlock& b, const SizePoint& s) {
  Transport& t = env.transport;
  t.scope().set_timeout(std::chrono::milliseconds(static_cast<long long>(b.settings.timeout_s * 1000)));
  const verify::Case c = make_case(b, s, t);
  CollArgs args = make_args(b, s);

  std::vector<PointResult> results;
  for (const AlgoEntry* e : b.algos) results.push_back(base_result(env, b, *e, s));
  for (std::size_t i = 0; i < b.algos.size(); ++i)  // library entries: what the library runs with
    if (b.algos[i]->config) results[i].library_config = b.algos[i]->config(*b.algos[i], args);
  for (std::size_t i = 0; i < b.algos.size(); ++i)
    if (b.algos[i]->supports)
      if (auto why = b.algos[i]->supports(t.size(), args)) skip(results[i], *why);

  // Host memory on every path; on a GPU also the device's free memory, shared by the ranks on
  // it. A point that cannot fit is skipped with the reason (the sweep goes on).
  const std::size_t live = static_cast<std::size_t>(
      std::count_if(results.begin(), results.end(), [](const PointResult& r) { return !r.skipped; }));
  const std::uint64_t copies = buffer_copies(b.settings, live);
  const std::optional<Backend::DeviceBudget> dev = env.owner ? env.owner->device_budget() : std::nullopt;
  std::optional<std::string> shortfall;
  if (dev) {
    const DevicePointMemory need = device_point_memory_need(b.op, s.chunk_count, b.dtype, t.size(), dev->staged, copies);
    shortfall = device_memory_shortfall(need.device, dev->ranks_per_device, dev->free);
    if (!shortfall) shortfall = memory_shortfall(need.host, env.topology.ranks_on_my_node, available_host_memory());
  } else {
    const std::uint64_t cold = b.settings.cache_cold ? cold_pool_target(b.settings, env.llc_bytes) : 0;
    shortfall = memory_shortfall(point_memory_need(b.op, s.chunk_count, b.dtype, t.size(), cold, copies).total(),
                                 env.topology.ranks_on_my_node, available_host_memory());
  }
  if (auto why = env.control.agree_error(shortfall))
    for (auto& r : results)
      if (!r.skipped) skip(r, *why);
  PeerMemory* registered = nullptr;
  if (b.settings.registered_buffers)
    if (auto why = env.control.agree_error(registered_memory(t, registered)))
      for (auto& r : results)
        if (!r.skipped) skip(r, *why);
  if (std::all_of(results.begin(), results.end(), [](const PointResult& r) { return r.skipped; })) return results;

  // One set of buffers per algorithm with --interleave (hot): an algorithm's call finds them as
  // its own previous call left them, its steady state when it runs alone, and pays nothing for
  // another's. Shared, the cache state of one leaks into the next: an out-of-place MPI_Bcast
  // (CMA single copy) leaves the root's recv in the peer's cache, and the next call writing it
  // pays the invalidations (a 128 KiB staged shm broadcast: 17-21 us after it against 7.3 us
  // alone; docs/measurement.md). Allocated in the same order on every rank (registered buffers
  // are collective). The algorithms share one scratch.
  std::vector<std::unique_ptr<PointBuffers>> per_algo;
  for (std::uint64_t k = 0; k < copies; ++k)
    per_algo.push_back(std::make_unique<PointBuffers>(t.memory(), c, registered, buffer_layout(b, c, env.llc_bytes)));
  PointBuffers& buffers = *per_algo.front();
  args.workspace = &buffers.scratch;
  args.send = buffers.sets.front().send;  // the first set's (the in-place test and traffic models read them)
  args.recv = buffers.sets.front().recv;
  if (b.settings.cache_cold)
    for (auto& r : results)
      r.cache_pool = PointResult::CachePool{buffers.pool.bytes(), buffers.pool.sets,
                                            buffers.pool.send_stride + buffers.pool.recv_stride, env.llc_bytes,
                                            env.llc_source};
  std::vector<std::unique_ptr<CollectiveWorkload>> owned;
  std::vector<CollectiveWorkload*> ws;
  std::vector<PointResult*> rs;
  for (std::size_t i = 0; i < b.algos.size(); ++i) {
    if (results[i].skipped) continue;
    CallInfo ctx{results[i].op, results[i].algo, s.bytes, -1, ""};
    const CallDecorator* around = env.around_calls && env.around_calls->wraps(b.algos[i]->algo, s.bytes) ? env.around_calls : nullptr;
    PointBuffers& own = *per_algo[ws.size() % per_algo.size()];  // the workload calls on its own sets
    owned.push_back(std::make_unique<CollectiveWorkload>(t, *b.algos[i], args, own, ctx,
                                                         point_label(b, *b.algos[i], s.bytes), around));
    ws.push_back(owned.back().get());
    rs.push_back(&results[i]);
  }
  const std::optional<double> copy_rate = point_copy_rate(env, b, buffers, results, args);
  if (b.settings.interleave && ws.size() > 1) run_interleaved(env, b, c, ws, rs);
  else run_sequential(env, b, c, buffers.scratch, ws, rs);
  for (std::size_t i = 0; i < b.algos.size(); ++i) {
    record_peer_claim(results[i], *b.algos[i], t, args);  // first: efficiency weighs its kernel_copy
    record_efficiency(results[i], b.op, *b.algos[i], t.size(), args, copy_rate, env.links);
  }
  return results;
}

}  // namespace collbench
