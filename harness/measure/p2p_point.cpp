#include "harness/measure/p2p_point.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <thread>

#include "harness/results/bandwidth.hpp"
#include "harness/measure/measure.hpp"
#include "harness/runtime/control.hpp"
#include "harness/runtime/control_call.hpp"

namespace collbench {
namespace {

constexpr int kTagPing = 101, kTagPong = 102, kTagData = 103, kTagAck = 104;
constexpr std::size_t kAckBytes = 4;  // osu_bw's ack
constexpr std::size_t kWindowRecvBytes = 64ull << 20;

// Payload byte i sent by `rank`: (37·rank + 11·i') mod 251 with i' = i mod 1000003, as the
// collectives' uint8 pattern; 251 never occurs, so it marks bytes that were not written.
std::uint8_t pattern_byte(int rank, std::size_t i) {
  return static_cast<std::uint8_t>((37u * static_cast<unsigned>(rank) + 11u * (i % 1000003u)) % 251u);
}
constexpr std::uint8_t kSentinel = 251;

// One rank's side of a pair: a send buffer holding its pattern, receive slots, an ack word.
struct PairBuffers {
  PairBuffers(MemorySpace& m, int rank, std::uint64_t bytes, std::size_t slots)
      : mem(&m), bytes(bytes), stride(std::max<std::uint64_t>(bytes, 1)), slots(slots) {
    send = Buffer(m, stride);
    recv = Buffer(m, stride * slots);
    ack = Buffer(m, kAckBytes);
    std::vector<std::uint8_t> host(stride);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = pattern_byte(rank, i);
    m.upload(send.data(), host.data(), host.size());
    const std::vector<std::uint8_t> zero(kAckBytes, 0);
    m.upload(ack.data(), zero.data(), zero.size());
    clear_recv();
  }
  void* slot(std::size_t k) const { return recv.bytes_ptr() + (k % slots) * stride; }
  void clear_recv() {
    const std::vector<std::uint8_t> fill(stride * slots, kSentinel);
    mem->upload(recv.data(), fill.data(), fill.size());
  }
  // Bytes of the first `n` slots that differ from `peer`'s pattern.
  std::uint64_t count_wrong(int peer, std::size_t n) const {
    std::vector<std::uint8_t> host(stride * slots);
    mem->download(host.data(), recv.data(), host.size());
    std::uint64_t wrong = 0;
    for (std::size_t k = 0; k < std::min(n, slots); ++k)
      for (std::size_t i = 0; i < bytes; ++i) wrong += host[k * stride + i] != pattern_byte(peer, i);
    return wrong;
  }

  MemorySpace* mem;
  std::uint64_t bytes, stride;
  std::size_t slots;
  Buffer send, recv, ack;
};

// One rank's part of one exchange of the method; run() is exactly what is timed.
class P2pWorkload final : public Workload {
 public:
  P2pWorkload(Transport& t, P2pMethod m, int peer, bool initiator, PairBuffers& b, CallInfo call,
              const std::string& label)
      : Workload(std::move(call), label),
        t_(t),
        m_(m),
        peer_(peer),
        initiator_(initiator),
        b_(b),
        reqs_(m == P2pMethod::latency ? 0 : 2 * kP2pWindow) {}

  void run() override { run_on(t_); }
  bool initiator() const { return initiator_; }
  // Receive slots this rank's run() fills (what verification checks).
  std::size_t slots_received() const {
    if (m_ == P2pMethod::latency) return 1;
    if (m_ == P2pMethod::bw && initiator_) return 0;  // the sender only gets the ack
    return std::min<std::size_t>(kP2pWindow, b_.slots);
  }

 private:
  void run_on(Transport& t) {
    switch (m_) {
      case P2pMethod::latency:
        return initiator_ ? ping(t) : pong(t);
      case P2pMethod::bw:
        return initiator_ ? send_window(t) : receive_window(t);
      case P2pMethod::bibw:
        return both_windows(t);
    }
  }
  void ping(Transport& t) {
    t.send(b_.send.data(), b_.bytes, peer_, kTagPing);
    t.recv(b_.slot(0), b_.bytes, peer_, kTagPong);
  }
  void pong(Transport& t) {
    t.recv(b_.slot(0), b_.bytes, peer_, kTagPing);
    t.send(b_.send.data(), b_.bytes, peer_, kTagPong);
  }
  // A window is one burst (Transport::isend_burst): the MPI transport posts its messages inline,
  // as osu_bw's loop of MPI_Isend does.
  void post_sends(Transport& t, std::size_t first) {
    t.isend_burst(b_.send.data(), b_.bytes, peer_, kTagData, std::span<Request>(reqs_).subspan(first, kP2pWindow));
  }
  void post_recvs(Transport& t, std::size_t first) {
    t.irecv_burst(b_.slot(0), b_.bytes, b_.stride, b_.slots, peer_, kTagData,
                  std::span<Request>(reqs_).subspan(first, kP2pWindow));
  }
  // The whole window in one wait, as osu_bw's MPI_Waitall.
  void send_window(Transport& t) {
    post_sends(t, 0);
    t.wait_all(std::span<Request>(reqs_).first(kP2pWindow));
    t.recv(b_.ack.data(), kAckBytes, peer_, kTagAck);
  }
  void receive_window(Transport& t) {
    post_recvs(t, 0);
    t.wait_all(std::span<Request>(reqs_).first(kP2pWindow));
    t.send(b_.ack.data(), kAckBytes, peer_, kTagAck);
  }
  void both_windows(Transport& t) {
    post_recvs(t, 0);
    post_sends(t, kP2pWindow);
    t.wait_all(reqs_);
  }

  Transport& t_;
  P2pMethod m_;
  int peer_;
  bool initiator_;
  PairBuffers& b_;
  std::vector<Request> reqs_;  // sized once: nothing is allocated while timing
};

// Back-to-back iterations on the pair (SampleStart::back_to_back), `messages` per iteration.
// Only the initiator's clock counts; the responder returns zeros (the max over ranks then
// gives the initiator's samples everywhere).
std::vector<double> time_pair(Transport& t, P2pWorkload& w, int iters, int messages) {
  std::vector<double> samples(static_cast<std::size_t>(iters), 0.0);
  CallInfo timed = w.call();
  timed.phase = "timed";
  for (int i = 0; i < iters; ++i) {
    const double us = time_sample(t, w, timed, i, 1, SampleStart::back_to_back);
    if (w.initiator()) samples[static_cast<std::size_t>(i)] = us / messages;
  }
  return samples;
}

// Where the ranks outside the pair wait for it: a "done" notice from the pair's source, polled
// with sleeps. Sleeping matters on oversubscribed cores (the emulated testbed: 4 ranks on 2
// cores), where a spinning waiter steals the pair's CPU and multiplies the measured latency
// (seen: 0.4 us -> 2 us with one waiter). Nothing bounds the others' wait: it lasts the pair's
// whole measurement, and a pair rank that stops is named by its own watchdog.
void wait_for_pair(Control& control, const RankPair& pair) {
  const int me = control.rank();
  if (me == pair.dst) return;
  if (me == pair.src) return control.notify_all_but(pair.dst, kPairDoneTag);
  control.await_notice(pair.src, kPairDoneTag, std::chrono::microseconds(50));
}

// Runs the method once more on cleared receive slots and counts wrong payload bytes.
std::uint64_t verify_pair(Transport& t, P2pWorkload& w, PairBuffers& b, int peer) {
  b.clear_recv();
  t.scope().set_call(w.call());
  t.scope().set_phase("verify");
  nvtx::Range range(w.labels().verify);
  w.run();
  {
    const BlockingCall call(t.scope(), &t, "in the device synchronisation before verification");
    t.memory().synchronize();
  }
  return b.count_wrong(peer, w.slots_received());
}

std::string p2p_label(P2pMethod m, const RankPair& p, std::uint64_t bytes) {
  return nvtx::range_name(nvtx::RangeKind::pingpong, {{"method", std::string(p2p_method_name(m))},
                                                      {"src", std::to_string(p.src)},
                                                      {"dst", std::to_string(p.dst)},
                                                      {"bytes", std::to_string(bytes)}});
}

// One pair: the others wait in a barrier while it warms up, runs and (with -c 1) verifies.
PointResult measure_pair(PointEnv& env, const P2pBlock& b, const SizePoint& s, const SelectedPair& p,
                         PairBuffers* buffers) {
  Transport& t = env.transport;
  const P2pMethod m = b.method;
  PointResult r = p2p_base_result(env, b, s, p);
  const int me = t.rank();
  const bool in_pair = me == p.ranks.src || me == p.ranks.dst;
  const int peer = me == p.ranks.src ? p.ranks.dst : p.ranks.src;
  std::vector<double> samples(static_cast<std::size_t>(b.settings.iters), 0.0);
  std::optional<P2pWorkload> w;
  t.barrier();  // the previous pair is done on every rank before this one starts
  if (in_pair) {
    CallInfo ctx{r.op, r.algo, s.bytes, -1, ""};
    w.emplace(t, m, peer, me == p.ranks.src, *buffers, ctx, p2p_label(m, p.ranks, s.bytes));
    nvtx::Range point(w->labels().point);
    warm_up(t, *w, b.settings.warmup);
    samples = time_pair(t, *w, b.settings.iters, p2p_messages_per_sample(m));
  }
  wait_for_pair(env.control, p.ranks);  // everyone else waits here while the pair communicates
  env.control.max_in_place(samples);
  r.time_us = summarize(samples);
  r.iters = b.settings.iters;
  r.osu_avg_us = r.time_us->mean;  // OSU's osu_latency/osu_bw number: the mean on src (no rank average)
  r.algbw_GBps = algbw_GBps(r.bytes, r.time_us->p50);
  r.busbw_GBps = *r.algbw_GBps * kP2pOpTraits[0].busbw.at(r.world_size);  // one link: 1
  if (b.settings.check) {
    const std::uint64_t wrong = in_pair ? verify_pair(t, *w, *buffers, peer) : 0;
    r.wrong = env.control.sum(wrong);
    r.checked = true;
  }
  return r;
}

}  // namespace

PointResult p2p_base_result(const PointEnv& env, const P2pBlock& b, const SizePoint& s, const SelectedPair& p) {
  // Raw bytes, timed per iteration (back to back).
  PointResult r = identity_result(env, kPingpongOp, p2p_method_name(b.method), DType::uint8, s, b.settings.warmup,
                                  TimingMode::per_iter);
  r.src = p.ranks.src;
  r.dst = p.ranks.dst;
  r.link = link_name(p);
  r.sync = SyncMethod::back_to_back;
  return r;
}

std::size_t p2p_recv_slots(P2pMethod m, std::uint64_t bytes) {
  if (m == P2pMethod::latency) return 1;
  const std::uint64_t fit = kWindowRecvBytes / std::max<std::uint64_t>(bytes, 1);
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(fit, 1, kP2pWindow));
}

std::vector<SelectedPair> p2p_pairs(const PointEnv& env, const P2pBlock& b) {
  return select_pairs(b.settings.pairs, env.topology.node_of_rank);
}

std::vector<PointResult> measure_p2p_pairs(PointEnv& env, const P2pBlock& b, const SizePoint& s,
                                           std::span<const SelectedPair> pairs) {
  Transport& t = env.transport;
  t.scope().set_timeout(std::chrono::milliseconds(static_cast<long long>(b.settings.timeout_s * 1000)));
  const int me = t.rank();
  const bool in_some_pair = std::any_of(pairs.begin(), pairs.end(),
                                        [me](const SelectedPair& p) { return p.ranks.src == me || p.ranks.dst == me; });
  // Buffers on the ranks that take part only (auto selects 3 ranks whatever the world size).
  std::optional<PairBuffers> buffers;
  if (in_some_pair) buffers.emplace(t.memory(), me, s.bytes, p2p_recv_slots(b.method, s.bytes));
  std::vector<PointResult> results;
  for (const auto& p : pairs) results.push_back(measure_pair(env, b, s, p, buffers ? &*buffers : nullptr));
  return results;
}

std::vector<PointResult> measure_p2p_size(PointEnv& env, const P2pBlock& b, const SizePoint& s) {
  return measure_p2p_pairs(env, b, s, p2p_pairs(env, b));
}

LinkRates calibrate_links(PointEnv& env, double timeout_s, const LinksFile* known) {
  LinkRates rates;
  if (env.topology.world_size < 2) return rates;
  P2pBlock b;
  b.method = P2pMethod::bw;
  b.settings.iters = kLinkIters;
  b.settings.warmup = 1;
  b.settings.check = false;
  const SizePoint s{kLinkBytes, kLinkBytes, kLinkBytes};
  const std::vector<SelectedPair> pairs = select_pairs(PairSpec{}, env.topology.node_of_rank);
  // Bounded, but not by a --timeout tuned to the points (1 ms finds a stalled 8-byte op): the
  // calibration moves 64 MiB per sample, seconds on a slow link.
  b.settings.timeout_s = std::max(timeout_s, kLinkMinTimeoutS);
  CallScope& scope = env.transport.scope();
  const std::chrono::milliseconds before = scope.timeout();  // restored for the control calls after it
  scope.set_timeout(std::chrono::milliseconds(static_cast<long long>(b.settings.timeout_s * 1000)));
  const int me = env.transport.rank();
  // Few receive slots, reused round-robin (osu_bw receives a whole window into one buffer): the
  // calibration must not raise the run's peak memory (harness.memory measures it).
  std::optional<PairBuffers> buffers;
  for (const auto& p : pairs)
    if (!buffers && (p.ranks.src == me || p.ranks.dst == me))
      buffers.emplace(env.transport.memory(), me, kLinkBytes, kLinkSlots);
  for (const auto& p : pairs) {
    const std::string& src_host = env.topology.host_of_rank.at(static_cast<std::size_t>(p.ranks.src));
    const std::string& dst_host = env.topology.host_of_rank.at(static_cast<std::size_t>(p.ranks.dst));
    if (known)  // the same on every rank: rank 0's file, broadcast
      if (auto r = reusable_rate(*known, env.backend, env.device, link_name(p), src_host, dst_host)) {
        r->src = p.ranks.src;  // the same hosts: this run's ranks there
        r->dst = p.ranks.dst;
        (p.intra ? rates.intra : rates.inter) = *r;
        continue;
      }
    const PointResult r = measure_pair(env, b, s, p, buffers ? &*buffers : nullptr);
    // The fastest sample: what the link can do (another job's load only ever adds time).
    const double best = r.time_us ? algbw_GBps(kLinkBytes, r.time_us->min) : 0;
    const double spread = r.time_us && r.time_us->min > 0 ? r.time_us->p50 / r.time_us->min - 1 : 0;
    (p.intra ? rates.intra : rates.inter) =
        LinkRate{best,   p.ranks.src, p.ranks.dst, kLinkBytes, static_cast<int>(r.time_us ? r.time_us->samples : 0),
                 spread, src_host,    dst_host,   ""};
  }
  scope.set_timeout(before);
  return rates;
}

}  // namespace collbench
