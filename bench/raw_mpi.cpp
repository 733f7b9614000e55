// collbench_raw: a plain-MPI reference for collbench's numbers (issue 14, part 1).
//
// No collbench code: plain loops of MPI_Allreduce / MPI_Bcast / MPI_Allgather /
// MPI_Reduce_scatter_block, a blocking MPI_Send/MPI_Recv ping-pong and a windowed MPI_Isend
// loop, with the SAME sizes, buffers and statistics as the collbench mode each one is compared
// with (bench/raw_compare.py pairs them):
//
//   sizes    -b/-e/-f as collbench: geometric steps, max included; `bytes` is nccl-tests' size
//            (allgather, reduce_scatter: the whole n-chunk array), rounded DOWN to whole elements
//            per chunk (float32), repeats after rounding measured once (harness/plan/sizes.cpp).
//   buffers  per size, 64-byte aligned host memory (aligned_alloc, as HostMemory), send and recv
//            of the op's extents (collectives/op_traits.hpp), filled before timing with the small
//            integers collbench's verification uses (float32 sum / non-reducing patterns).
//   methods  batch     barrier, t0, N back-to-back calls, t1; sample = (t1-t0)/N per rank, MAX over
//                      ranks (collbench --batch); S samples (--samples), p50 over samples
//            per_call  after one barrier, N back-to-back calls each timed on its own (no barrier
//                      between them); each call's time MAX over ranks, p50 over calls: the plain
//                      loop's per-call time, to hold collbench's per-iteration mode against
//            barrier   barrier, t0, call, t1 per iteration, MAX over ranks, p50: what collbench's
//                      default per-iteration mode does, in plain MPI (shows what the barrier costs);
//                      --idle-us U: each rank first spins U us touching nothing (the idle gap a
//                      clock-start window leaves between samples; docs/machine.md)
//            clock     ReproMPI's synchronized start on one machine, where every process reads
//                      one CLOCK_MONOTONIC: rank 0 broadcasts a base time, iteration i starts
//                      at base + i * --window-us on every rank (default: collbench's first
//                      window, twice the warm-up mean plus 1 us, at least 3 us) (plus rank *
//                      --stagger-ns); each rank spins until then, calls, stops; sample = end -
//                      start, MAX over ranks, p50; an iteration a rank left the spin more than
//                      1 us late is dropped, as collbench drops it; a pass with every start
//                      late runs again with the window doubled (up to 32x; the window used is
//                      recorded). What collbench's default per-iteration mode does, in plain MPI
//            latency   osu_latency: ranks 0 and 1, blocking MPI_Send/MPI_Recv ping-pong, N round
//                      trips back to back, each timed on rank 0; sample = round trip / 2; p50
//            bw        osu_bw: rank 0 posts 64 MPI_Isend, MPI_Waitall, receives a 4-byte ack that
//                      rank 1 sends once its 64 MPI_Irecv completed; sample = elapsed / 64; p50
//            Warm-up: -w calls (iterations, windows) per point before any sample, like collbench.
//
// Output: one JSON line per (op, method, bytes) on stdout (or appended to --json FILE), rank 0
// only: {"type":"raw","op","method","bytes","count","world_size","iters","samples","warmup",
// "p50_us","mean_us","min_us","max_us","samples_us":[...]} (times in microseconds per call / per
// message). --table prints a human-readable line per point to stderr.
//
// Usage: mpirun -np 2 collbench_raw --op allreduce,broadcast --method batch -b 8 -e 64K -n 1000 -w 100
//        mpirun -np 2 collbench_raw --op latency,bw -b 8 -e 64K -n 1000 -w 100
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness/plan/size_grammar.hpp"  // header-only: no collbench code is linked

namespace {

constexpr int kWindow = 64;                              // osu_bw's window (collbench kP2pWindow)
constexpr std::uint64_t kWindowRecvBytes = 64ull << 20;  // collbench's receive-slot budget
constexpr int kAckBytes = 4;
constexpr int kTagPing = 101, kTagPong = 102, kTagData = 103, kTagAck = 104;

[[noreturn]] void die(int rank, const std::string& msg) {
  if (rank == 0) std::fprintf(stderr, "collbench_raw: %s\n", msg.c_str());
  MPI_Finalize();
  std::exit(2);
}

// ---- sizes: collbench's grammar (harness/plan/size_grammar.hpp, header-only) ----------------

std::vector<std::uint64_t> size_steps(std::uint64_t min, std::uint64_t max, std::uint64_t factor) {
  std::vector<std::uint64_t> out;
  if (min > max) return out;
  std::uint64_t s = min;
  while (true) {
    out.push_back(s);
    std::uint64_t next;
    if (s == 0)
      next = 1;
    else if (s > max / factor)
      break;
    else
      next = s * factor;
    if (next > max) break;
    s = next;
  }
  if (out.back() != max) out.push_back(max);
  return out;
}

// Requested sizes rounded down to whole elements per chunk; repeats dropped.
std::vector<std::uint64_t> size_points(const std::vector<std::uint64_t>& req, std::uint64_t granule) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t r : req) {
    const std::uint64_t b = r / granule * granule;
    if (!out.empty() && out.back() == b) continue;
    out.push_back(b);
  }
  return out;
}

// ---- buffers, as HostMemory (64-byte aligned) ---------------------------------------------

struct Aligned {
  explicit Aligned(std::size_t bytes) : bytes(bytes) {
    const std::size_t rounded = (bytes + 63) / 64 * 64;
    p = std::aligned_alloc(64, rounded ? rounded : 64);
    if (!p) {
      std::fprintf(stderr, "collbench_raw: out of memory (%zu bytes)\n", bytes);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
  ~Aligned() { std::free(p); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
  float* f() const { return static_cast<float*>(p); }
  std::uint8_t* u8() const { return static_cast<std::uint8_t*>(p); }
  void* p;
  std::size_t bytes;
};

// collbench's float32 inputs (collectives/verify): sum ((r + i') mod 7) + 1 on 2..7 ranks (m =
// clamp(2^24 / n, 1, 7)), non-reducing (37 r + 11 i') mod 65521; the receive buffer holds the
// sentinel 65521. Any small integers would do: they only have to be touched and not denormal.
void fill_float(float* p, std::size_t count, int rank, bool reducing, int world) {
  const std::uint64_t m = std::clamp<std::uint64_t>((1ull << 24) / static_cast<std::uint64_t>(world), 1, 7);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t ip = i % 1000003u;
    p[i] = reducing ? static_cast<float>((static_cast<std::uint64_t>(rank) + ip) % m + 1)
                    : static_cast<float>((37u * static_cast<std::uint64_t>(rank) + 11u * ip) % 65521u);
  }
}
void fill_sentinel(float* p, std::size_t count) { std::fill(p, p + count, 65521.0f); }

// ---- statistics, as harness/results/stats.cpp (percentile type 7) -----------------------

double percentile(std::vector<double> v, double pct) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double h = (static_cast<double>(v.size()) - 1) * pct / 100.0;
  const std::size_t lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= v.size()) return v.back();
  return v[lo] + (h - static_cast<double>(lo)) * (v[lo + 1] - v[lo]);
}

void max_over_ranks(std::vector<double>& v) {
  if (!v.empty())
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

struct Options {
  std::vector<std::string> ops{"allreduce"};
  std::vector<std::string> methods{"batch"};
  std::uint64_t min_bytes = 8, max_bytes = 8, factor = 2;
  int iters = 20, warmup = 5, samples = 1, root = 0;
  double idle_us = 0;  // barrier method: spin this long before each barrier
  double window_us = 0, stagger_ns = 0;  // clock method (window 0: as collbench's first)
  bool bcast_copy = false, table = false, dup_comm = false;
  std::string json;
};

struct Point {
  std::string op, method;
  std::uint64_t bytes, count;
  int iters;  // calls (messages for bw: windows) per sample
  std::vector<double> samples_us;
  double window_us = 0;  // clock method: the window used
};

void report(const Options& o, int world, const Point& p, FILE* out) {
  const auto& s = p.samples_us;
  double mean = 0;
  for (double x : s) mean += x;
  mean = s.empty() ? 0 : mean / static_cast<double>(s.size());
  const double p50 = percentile(s, 50);
  std::string line = "{\"type\":\"raw\",\"schema\":\"collbench-raw/1\",\"op\":\"" + p.op + "\",\"method\":\"" +
                     p.method + "\",\"bytes\":" + std::to_string(p.bytes) + ",\"count\":" + std::to_string(p.count) +
                     ",\"world_size\":" + std::to_string(world) + ",\"iters\":" + std::to_string(p.iters) +
                     ",\"samples\":" + std::to_string(s.size()) + ",\"warmup\":" + std::to_string(o.warmup);
  char buf[128];
  auto num = [&](const char* key, double v) {
    std::snprintf(buf, sizeof buf, ",\"%s\":%.6g", key, v);
    line += buf;
  };
  num("p50_us", p50);
  num("mean_us", mean);
  num("min_us", s.empty() ? 0 : *std::min_element(s.begin(), s.end()));
  num("max_us", s.empty() ? 0 : *std::max_element(s.begin(), s.end()));
  line += ",\"bcast_copy\":";
  line += (p.op == "broadcast" && o.bcast_copy) ? "true" : "false";
  line += ",\"dup_comm\":";
  line += o.dup_comm ? "true" : "false";
  if (p.method == "barrier") num("idle_us", o.idle_us);
  if (p.method == "clock") {
    num("window_us", p.window_us);
    num("stagger_ns", o.stagger_ns);
  }
  line += ",\"samples_us\":[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.6g", i ? "," : "", s[i]);
    line += buf;
  }
  line += "]}\n";
  std::fputs(line.c_str(), out);
  std::fflush(out);
  if (o.table)
    std::fprintf(stderr, "%-15s %-9s %12llu B  p50 %10.3f us  mean %10.3f us  (%zu samples)\n", p.op.c_str(),
                 p.method.c_str(), static_cast<unsigned long long>(p.bytes), p50, mean, s.size());
}

// ---- collectives ---------------------------------------------------------------------------

enum class Coll { allreduce, broadcast, allgather, reduce_scatter };

bool parse_coll(const std::string& s, Coll& c) {
  if (s == "allreduce")
    c = Coll::allreduce;
  else if (s == "broadcast")
    c = Coll::broadcast;
  else if (s == "allgather")
    c = Coll::allgather;
  else if (s == "reduce_scatter")
    c = Coll::reduce_scatter;
  else
    return false;
  return true;
}

// One rank's buffers for one size: send and recv with the op's extents, filled.
struct CollBuffers {
  CollBuffers(Coll op, std::uint64_t chunk, int rank, int world)
      : send(elems(op, true, chunk, world) * sizeof(float)), recv(elems(op, false, chunk, world) * sizeof(float)) {
    const bool reducing = op == Coll::allreduce || op == Coll::reduce_scatter;
    fill_float(send.f(), send.bytes / sizeof(float), rank, reducing, world);
    fill_sentinel(recv.f(), recv.bytes / sizeof(float));
  }
  static std::size_t elems(Coll op, bool is_send, std::uint64_t chunk, int world) {
    const bool world_sized = is_send ? op == Coll::reduce_scatter : op == Coll::allgather;
    return static_cast<std::size_t>(chunk * (world_sized ? static_cast<std::uint64_t>(world) : 1));
  }
  Aligned send, recv;
};

struct CollCall {
  Coll op;
  void* send;
  void* recv;
  int count;  // per-rank chunk, elements
  int root, rank;
  bool bcast_copy;
  std::size_t bytes;  // chunk bytes (broadcast copy)
  void operator()() const {
    switch (op) {
      case Coll::allreduce:
        MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        return;
      case Coll::broadcast:
        // collbench's library broadcast copies send -> recv at the root, then MPI_Bcast(recv);
        // the plain reference broadcasts recv alone unless --bcast-copy asks for the copy.
        if (bcast_copy && rank == root && bytes) std::memcpy(recv, send, bytes);
        MPI_Bcast(recv, count, MPI_FLOAT, root, MPI_COMM_WORLD);
        return;
      case Coll::allgather:
        MPI_Allgather(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, MPI_COMM_WORLD);
        return;
      case Coll::reduce_scatter:
        MPI_Reduce_scatter_block(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        return;
    }
  }
};

std::vector<double> time_batch(const CollCall& call, int iters, int samples) {
  std::vector<double> out(static_cast<std::size_t>(samples));
  for (int s = 0; s < samples; ++s) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) call();
    out[static_cast<std::size_t>(s)] = (MPI_Wtime() - t0) * 1e6 / iters;
  }
  max_over_ranks(out);
  return out;
}

std::vector<double> time_per_call(const CollCall& call, int iters) {
  std::vector<double> out(static_cast<std::size_t>(iters));
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < iters; ++i) {
    const double t0 = MPI_Wtime();
    call();
    out[static_cast<std::size_t>(i)] = (MPI_Wtime() - t0) * 1e6;
  }
  max_over_ranks(out);
  return out;
}

std::vector<double> time_with_barrier(const CollCall& call, int iters, double idle_us) {
  std::vector<double> out(static_cast<std::size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    for (const double until = MPI_Wtime() + idle_us * 1e-6; MPI_Wtime() < until;) {
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    call();
    out[static_cast<std::size_t>(i)] = (MPI_Wtime() - t0) * 1e6;
  }
  max_over_ranks(out);
  return out;
}

// One pass of `iters` clock-started calls; the samples of those no rank started late (empty when
// every start was).
std::vector<double> clock_pass(const CollCall& call, int iters, double window_us, double stagger_ns, int rank) {
  using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC: one clock for the machine's processes
  const auto ns = [](Clock::time_point t) { return std::chrono::duration<double, std::nano>(t.time_since_epoch()).count(); };
  double base = ns(Clock::now()) + 100e3;  // rank 0's now + 100 us: every rank has it before then
  MPI_Bcast(&base, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<double> out(static_cast<std::size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    const double at = base + i * window_us * 1e3 + rank * stagger_ns;
    double t0 = ns(Clock::now());
    while (t0 < at) t0 = ns(Clock::now());
    call();
    const double t1 = ns(Clock::now());
    out[static_cast<std::size_t>(i)] = t0 - at > 1e3 ? -1.0 : (t1 - at) * 1e-3;  // late: dropped below
  }
  // MAX over ranks keeps a late rank's -1 only where every rank was late; drop any late one.
  std::vector<double> late(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) late[i] = out[i] < 0 ? 1.0 : 0.0;
  max_over_ranks(out);
  max_over_ranks(late);
  std::vector<double> kept;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (late[i] == 0) kept.push_back(out[i]);
  return kept;
}

// The clock method: a pass in which every start was late (a rank preempted once on a busy
// machine stays late for the rest of a narrow window's pass) is run again with the window
// doubled, as collbench widens its window on late starts; `window_us` returns the one used.
constexpr int kClockPasses = 6;  // the first window x 32 at most
std::vector<double> time_clock_started(const CollCall& call, int iters, double& window_us, double stagger_ns,
                                       int rank) {
  for (int pass = 0; pass < kClockPasses; ++pass, window_us *= 2) {
    std::vector<double> kept = clock_pass(call, iters, window_us, stagger_ns, rank);
    if (!kept.empty()) return kept;  // the same on every rank: `late` is reduced over them
  }
  die(rank, "clock method: every iteration started late in " + std::to_string(kClockPasses) +
                " passes (last window " + std::to_string(window_us / 2) + " us); use a wider --window-us");
}

void run_collective(const Options& o, Coll op, const std::string& name, int rank, int world, FILE* out) {
  const std::uint64_t chunks =
      (op == Coll::allgather || op == Coll::reduce_scatter) ? static_cast<std::uint64_t>(world) : 1;
  for (std::uint64_t bytes : size_points(size_steps(o.min_bytes, o.max_bytes, o.factor), chunks * sizeof(float))) {
    const std::uint64_t chunk = bytes / (chunks * sizeof(float));
    if (chunk > static_cast<std::uint64_t>(INT32_MAX))
      die(rank, "count exceeds MPI's int at " + std::to_string(bytes) + " B");
    CollBuffers b(op, chunk, rank, world);
    const CollCall call{op,     b.send.p, b.recv.p,     static_cast<int>(chunk),
                        o.root, rank,     o.bcast_copy, static_cast<std::size_t>(chunk * sizeof(float))};
    // The clock method's window when not given: collbench's first window (twice the mean of
    // the warm-up's second half, max over ranks, plus 1 us, at least 3 us: harness/measure/
    // measure.cpp; the first calls set up connections and fault pages in).
    double w0 = MPI_Wtime();
    for (int i = 0; i < o.warmup; ++i) {
      if (i == o.warmup / 2) w0 = MPI_Wtime();
      call();
    }
    const int timed_warmup = o.warmup - o.warmup / 2;
    double warm_us = timed_warmup > 0 ? (MPI_Wtime() - w0) * 1e6 / timed_warmup : 0;
    MPI_Allreduce(MPI_IN_PLACE, &warm_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double window_us = o.window_us > 0 ? o.window_us : std::max(3.0, 2 * warm_us + 1);
    for (const std::string& m : o.methods) {
      Point p{name, m, bytes, bytes / sizeof(float), o.iters, {}};
      if (m == "batch")
        p.samples_us = time_batch(call, o.iters, o.samples);
      else if (m == "per_call")
        p.samples_us = time_per_call(call, o.iters);
      else if (m == "barrier")
        p.samples_us = time_with_barrier(call, o.iters, o.idle_us);
      else if (m == "clock") {
        p.window_us = window_us;
        p.samples_us = time_clock_started(call, o.iters, p.window_us, o.stagger_ns, rank);
      }
      if (rank == 0) report(o, world, p, out);
    }
  }
}

// ---- point to point (ranks 0 and 1) -------------------------------------------------------

std::uint8_t pattern_byte(int rank, std::size_t i) {
  return static_cast<std::uint8_t>((37u * static_cast<unsigned>(rank) + 11u * (i % 1000003u)) % 251u);
}

void run_p2p(const Options& o, const std::string& method, int rank, int world, FILE* out) {
  const bool in_pair = rank < 2;
  const int peer = 1 - rank;
  for (std::uint64_t bytes : size_points(size_steps(o.min_bytes, o.max_bytes, o.factor), 1)) {
    if (bytes > static_cast<std::uint64_t>(INT32_MAX)) die(rank, "message exceeds MPI's int");
    const std::size_t stride = std::max<std::uint64_t>(bytes, 1);
    const std::size_t slots =
        method == "latency"
            ? 1
            : static_cast<std::size_t>(std::clamp<std::uint64_t>(kWindowRecvBytes / stride, 1, kWindow));
    const int n = static_cast<int>(bytes);
    std::vector<double> samples(static_cast<std::size_t>(o.iters), 0.0);
    MPI_Barrier(MPI_COMM_WORLD);  // the previous point is done everywhere (collbench: barrier per pair)
    if (in_pair) {
      Aligned send(stride), recv(stride * slots), ack(kAckBytes);
      for (std::size_t i = 0; i < stride; ++i) send.u8()[i] = pattern_byte(rank, i);
      std::memset(recv.p, 251, recv.bytes);
      std::memset(ack.p, 0, kAckBytes);
      auto slot = [&](std::size_t k) { return recv.u8() + (k % slots) * stride; };
      MPI_Request reqs[kWindow];
      auto once = [&]() {
        if (method == "latency") {
          if (rank == 0) {
            MPI_Send(send.p, n, MPI_BYTE, peer, kTagPing, MPI_COMM_WORLD);
            MPI_Recv(slot(0), n, MPI_BYTE, peer, kTagPong, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else {
            MPI_Recv(slot(0), n, MPI_BYTE, peer, kTagPing, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(send.p, n, MPI_BYTE, peer, kTagPong, MPI_COMM_WORLD);
          }
        } else if (rank == 0) {
          for (int k = 0; k < kWindow; ++k) MPI_Isend(send.p, n, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD, &reqs[k]);
          MPI_Waitall(kWindow, reqs, MPI_STATUSES_IGNORE);
          MPI_Recv(ack.p, kAckBytes, MPI_BYTE, peer, kTagAck, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          for (int k = 0; k < kWindow; ++k)
            MPI_Irecv(slot(static_cast<std::size_t>(k)), n, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD, &reqs[k]);
          MPI_Waitall(kWindow, reqs, MPI_STATUSES_IGNORE);
          MPI_Send(ack.p, kAckBytes, MPI_BYTE, peer, kTagAck, MPI_COMM_WORLD);
        }
      };
      const double per = method == "latency" ? 2.0 : static_cast<double>(kWindow);
      for (int i = 0; i < o.warmup; ++i) once();
      for (int i = 0; i < o.iters; ++i) {  // back to back; only rank 0's clock counts
        const double t0 = MPI_Wtime();
        once();
        const double us = (MPI_Wtime() - t0) * 1e6 / per;
        if (rank == 0) samples[static_cast<std::size_t>(i)] = us;
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) report(o, world, {"pingpong", method, bytes, bytes, o.iters, samples}, out);
  }
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t c = s.find(',', start);
    const std::string item = s.substr(start, c == std::string::npos ? std::string::npos : c - start);
    if (!item.empty()) out.push_back(item);
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return out;
}

constexpr const char* kUsage =
    "usage: mpirun -np N collbench_raw [--op OPS] [--method METHODS] [-b MIN] [-e MAX] [-f FACTOR]\n"
    "                               [-n ITERS] [-w WARMUP] [--samples S] [--root R] [--bcast-copy]\n"
    "                               [--dup-comm] [--idle-us U] [--window-us W] [--stagger-ns S]\n"
    "                               [--json FILE] [--table]\n"
    "  --op       allreduce,broadcast,allgather,reduce_scatter (float32; sum for the reducing ones),\n"
    "             latency, bw (pingpong between ranks 0 and 1, osu_latency / osu_bw); comma list\n"
    "  --method   batch, per_call, barrier, clock (collectives only; comma list; default batch)\n"
    "  -b -e -f   sizes as collbench (8, 64K, 16M; nccl-tests size, rounded down to whole elements)\n"
    "  -n -w      calls per sample / timed iterations, warm-up calls per point (default 20, 5)\n"
    "  --samples  batch samples per point, p50 over them (default 1, as collbench --batch)\n"
    "  --bcast-copy  broadcast copies send->recv at the root before MPI_Bcast, as collbench's library\n"
    "  --dup-comm    MPI_Comm_dup once before timing, as most programs that make a communicator do:\n"
    "             Open MPI 4.1 then runs libnbc's progress callback in every progress loop for the\n"
    "             rest of the process (docs/machine.md; collbench avoids it); the calls stay on\n"
    "             MPI_COMM_WORLD\n"
    "  --idle-us  barrier method: each rank spins U us before each barrier (default 0)\n"
    "  --window-us  clock method: iteration i starts at base + i*W us on every rank (default: as\n"
    "             collbench's first window, 2 x the warm-up mean + 1 us, at least 3 us); doubled\n"
    "             while every start of a pass was late (up to 32x; window_us records it)\n"
    "  --stagger-ns clock method: rank r starts r*S ns after the common start (default 0)\n"
    "  --json     append the JSON lines to FILE instead of stdout\n"
    "  --table    also print one readable line per point on stderr\n";

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(rank, a + " needs a value\n" + kUsage);
      return argv[++i];
    };
    auto integer = [&](int lo) {
      const std::string v = value();
      char* end = nullptr;
      const long x = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || x < lo || x > INT32_MAX) die(rank, "bad value '" + v + "' for " + a);
      return static_cast<int>(x);
    };
    auto size = [&]() {
      std::uint64_t b = 0;
      const std::string v = value();
      const collbench::size_grammar::Parsed size = collbench::size_grammar::parse(v);
      if (!size.error.empty()) die(rank, "bad size '" + v + "' for " + a + " (" + size.error + ")");
      b = size.bytes;
      return b;
    };
    if (a == "-h" || a == "--help") {
      if (rank == 0) std::fputs(kUsage, stdout);
      MPI_Finalize();
      return 0;
    } else if (a == "--op")
      o.ops = split(value());
    else if (a == "--method")
      o.methods = split(value());
    else if (a == "-b" || a == "--minbytes")
      o.min_bytes = size();
    else if (a == "-e" || a == "--maxbytes")
      o.max_bytes = size();
    else if (a == "-f" || a == "--stepfactor")
      o.factor = static_cast<std::uint64_t>(integer(2));
    else if (a == "-n" || a == "--iters")
      o.iters = integer(1);
    else if (a == "-w" || a == "--warmup")
      o.warmup = integer(0);
    else if (a == "--samples")
      o.samples = integer(1);
    else if (a == "--root")
      o.root = integer(0);
    else if (a == "--bcast-copy")
      o.bcast_copy = true;
    else if (a == "--table")
      o.table = true;
    else if (a == "--dup-comm")
      o.dup_comm = true;
    else if (a == "--json")
      o.json = value();
    else if (a == "--idle-us")
      o.idle_us = integer(0);
    else if (a == "--window-us")
      o.window_us = integer(0);
    else if (a == "--stagger-ns")
      o.stagger_ns = integer(0);
    else
      die(rank, "unknown option '" + a + "'\n" + kUsage);
  }
  if (o.min_bytes > o.max_bytes) die(rank, "-b is larger than -e");
  if (o.root >= world) die(rank, "--root is outside the world");
  for (const auto& m : o.methods)
    if (m != "batch" && m != "per_call" && m != "barrier" && m != "clock")
      die(rank, "unknown method '" + m + "' (batch, per_call, barrier, clock)");
  for (const auto& op : o.ops) {
    Coll c;
    if (!parse_coll(op, c) && op != "latency" && op != "bw") die(rank, "unknown op '" + op + "'");
    if ((op == "latency" || op == "bw") && world < 2) die(rank, op + " needs 2 ranks");
  }
  FILE* out = stdout;
  if (rank == 0 && !o.json.empty()) {
    out = std::fopen(o.json.c_str(), "a");
    if (!out) {
      std::fprintf(stderr, "collbench_raw: cannot open %s\n", o.json.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  MPI_Comm dup = MPI_COMM_NULL;
  if (o.dup_comm) MPI_Comm_dup(MPI_COMM_WORLD, &dup);  // its CID agreement is an MPI_Iallreduce
  for (const auto& op : o.ops) {
    Coll c;
    if (parse_coll(op, c))
      run_collective(o, c, op, rank, world, out);
    else
      run_p2p(o, op, rank, world, out);
  }
  if (rank == 0 && out != stdout) std::fclose(out);
  if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
