// Where the harness's time goes on a small message, layer by layer, under mpirun -np 2:
//
//   mpirun -np 2 build/bench_overhead [--iters N] [--reps R] [--bytes B] [--thread single|funneled]
//
// MPI is initialised MPI_THREAD_SINGLE like collbench (harness/main.cpp); --thread funneled
// shows what the level costs (Open MPI 4.1 then locks every message: run both and compare).
//
// Every variant times N back-to-back calls (barrier outside the timed region, each rank's mean
// per call, max over ranks: the --batch statistic) and the variants are interleaved A B C ...
// A B C ... R times in ONE process, so load from other jobs hits them alike and the ratios
// to the raw loop hold while the absolute numbers move. Printed per variant: median and
// min-max over the repetitions (ns per call) and the median of the per-repetition ratio to
// the raw loop of the same kind.
//
// Collective layers (allreduce, float32 sum, --bytes, out of place):
//   raw_allreduce      MPI_Allreduce on a duplicated communicator
//   raw_allreduce_tcomm the same on the transport's communicator
//   blocking_allreduce + the BlockingCall the library entries publish for the watchdog, on the
//                      transport's communicator
//   prepared_allreduce the entry's bound call (AlgoEntry::prepare), what the timed loop calls
//   entry_allreduce    the registry entry unbound (AlgoEntry::run: function pointer, type check,
//                      op, datatype and count resolved per call), what verification calls
//   workload_allreduce + the virtual Workload::run the harness calls (the bound call)
//   sample_allreduce   + time_sample(... N ops ...) itself: scope update, NVTX range, clock,
//                      memory().synchronize(), one run_n per sample
// Point-to-point (rank 0 <-> rank 1, --bytes):
//   raw_pingpong       MPI_Send / MPI_Recv, half round trip
//   transport_pingpong Transport::send / recv (isend/irecv + wait under the call scope)
//   raw_window         64 MPI_Isend (rank 0) / MPI_Irecv (rank 1), MPI_Waitall, 4-byte ack; per message
//   transport_window   the same with MpiTransport::isend / irecv (inline) and one wait_all of the
//                      whole window (as p2p_point's bw method)
// Variants ending in _w run with the scope watched (as under the harness's watchdog);
// transport_window8_w waits in chunks of 8 (p2p_point before 2026-11-23).
// Components (rank-local, no communication): a steady_clock read, one Deadline (begin + end),
// MPI_Test on a completed request's null handle, dynamic_cast of the transport.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collectives/registry.hpp"
#include "collectives/backends/mpi/mpi_transport.hpp"
#include "harness/measure/measure.hpp"
#if __has_include("harness/runtime/watchdog.hpp")
#include "harness/runtime/watchdog.hpp"
#define COLLBENCH_BENCH_WATCHDOG 1  // the build has the watchdog: time the watched paths too
#endif

using namespace collbench;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  bool funneled = false;  // --thread funneled: MPI_THREAD_FUNNELED, else MPI_THREAD_SINGLE
  int iters = 20000, reps = 15;
  std::size_t bytes = 8;
};

// --thread, read before MPI_Init_thread (it picks the thread level).
bool funneled_requested(int argc, char** argv) {
  bool funneled = false;
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--thread")) funneled = !std::strcmp(argv[i + 1], "funneled");
  return funneled;
}

// --iters, --reps and --bytes, read after MPI_Init_thread.
Options parse_options(int argc, char** argv, bool funneled) {
  Options o;
  o.funneled = funneled;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) o.iters = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--reps")) o.reps = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--bytes")) o.bytes = std::strtoull(argv[i + 1], nullptr, 10);
  }
  return o;
}

// The harness's collective workload on a library entry: its bound call, as
// harness/measure/collective_point.cpp times it (run_n: one virtual call per sample).
class EntryWorkload final : public Workload {
 public:
  EntryWorkload(Transport& t, const AlgoEntry& e, const CollArgs& a)
      : Workload(CallInfo{"allreduce", "library", a.count * 4, -1, ""}, "allreduce/library"), call_(e.prepare(t, a)) {}
  void run() override { call_(); }
  void run_n(int n) override {
    for (int k = 0; k < n; ++k) call_();
  }

 private:
  PreparedCall call_;
};

MPI_Comm dup_world() {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  return c;
}

// What the variants run on, made in this order: a duplicate of MPI_COMM_WORLD for the raw calls,
// the transport on another (60 s timeout), the allreduce (float32 sum of --bytes, out of place)
// with its library entry as a workload and bound, and the point-to-point buffers.
struct Setup {
  static constexpr int kWindow = 64;  // messages in flight in a window variant

  Setup(const Options& o, int r) : bytes(o.bytes), iters(o.iters), rank(r) {}
  ~Setup() { MPI_Comm_free(&raw_comm); }
  Setup(const Setup&) = delete;
  Setup& operator=(const Setup&) = delete;

  const std::size_t bytes;
  const int iters, rank, peer = 1 - rank;
  MPI_Comm raw_comm = dup_world();
  MpiTransport t{dup_world(), std::make_shared<CallScope>(std::chrono::seconds(60))};
  const AlgoEntry* entry = Registry::get().find(Op::allreduce, "library", "mpi");
  const std::size_t count = std::max<std::size_t>(bytes / 4, 1);
  std::vector<float> send = std::vector<float>(count, 1.0f), recv = std::vector<float>(count, 0.0f);
  CollArgs a{.send = send.data(),
             .recv = recv.data(),
             .count = count,
             .dtype = DType::float32,
             .op = make_reduce_op(RedOp::sum, DType::float32)};
  EntryWorkload w{t, *entry, a};
  CallInfo timed = timed_call(w);
  PreparedCall prepared = entry->prepare(t, a);
  std::vector<char> sbuf = std::vector<char>(std::max<std::size_t>(bytes, 1), 'x'),
                    rbuf = std::vector<char>(std::max<std::size_t>(bytes, 1) * kWindow);
  char ack[4] = {0, 0, 0, 0};
  std::vector<MPI_Request> mreqs = std::vector<MPI_Request>(kWindow);
  std::vector<Request> treqs = std::vector<Request>(kWindow);
  const int n_win = std::max(1, iters / kWindow);  // windows per sample
  volatile long sink = 0;                           // what the rank-local loops write

 private:
  static CallInfo timed_call(const Workload& w) {
    CallInfo c = w.call();
    c.phase = "timed";
    return c;
  }
};

using Run = std::function<double(int)>;  // N calls -> seconds per call on this rank

struct Variant {
  Variant(std::string n, std::string b, Run r) : name(std::move(n)), baseline(std::move(b)), run(std::move(r)) {}
  std::string name;
  std::string baseline;  // the raw variant it is compared with ("" = none)
  Run run;
  std::vector<double> ns;  // per repetition: ns per call, max over ranks
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Seconds for n calls of body.
template <class Body>
double timed_loop(int n, Body&& body) {
  const auto t0 = Clock::now();
  for (int k = 0; k < n; ++k) body();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ---- the collective layers ----------------------------------------------------------------

Run raw_allreduce(Setup& s, MPI_Comm comm) {
  return [&s, comm](int n) {
    return timed_loop(n, [&] { MPI_Allreduce(s.send.data(), s.recv.data(), (int)s.count, MPI_FLOAT, MPI_SUM, comm); }) /
           n;
  };
}

// The raw call on the transport's communicator as the library entries publish it.
Run blocking_allreduce(Setup& s) {
  return [&s](int n) {
    return timed_loop(n,
                      [&] {
                        const BlockingCall c(s.t.scope(), &s.t, "in MPI_Allreduce");
                        MPI_Allreduce(s.send.data(), s.recv.data(), (int)s.count, MPI_FLOAT, MPI_SUM, s.t.comm());
                      }) /
           n;
  };
}

Run prepared_allreduce(Setup& s) {
  return [&s](int n) { return timed_loop(n, [&] { s.prepared(); }) / n; };
}

Run entry_allreduce(Setup& s) {
  return [&s](int n) { return timed_loop(n, [&] { s.entry->run(s.t, s.a); }) / n; };
}

Run workload_allreduce(Setup& s) {
  return [&s](int n) {
    Workload& wl = s.w;
    return timed_loop(n, [&] { wl.run(); }) / n;
  };
}

Run sample_allreduce(Setup& s) {
  return [&s](int n) { return time_sample(s.t, s.w, s.timed, 0, n, SampleStart::back_to_back) * 1e-6; };
}

// ---- point to point -----------------------------------------------------------------------

// One-way time of a ping-pong with MPI_Send / MPI_Recv.
Run raw_pingpong(Setup& s) {
  return [&s](int n) {
    return timed_loop(n,
                      [&] {
                        if (s.rank == 0) {
                          MPI_Send(s.sbuf.data(), (int)s.bytes, MPI_BYTE, s.peer, 1, s.raw_comm);
                          MPI_Recv(s.rbuf.data(), (int)s.bytes, MPI_BYTE, s.peer, 2, s.raw_comm, MPI_STATUS_IGNORE);
                        } else {
                          MPI_Recv(s.rbuf.data(), (int)s.bytes, MPI_BYTE, s.peer, 1, s.raw_comm, MPI_STATUS_IGNORE);
                          MPI_Send(s.sbuf.data(), (int)s.bytes, MPI_BYTE, s.peer, 2, s.raw_comm);
                        }
                      }) /
           (2.0 * n);
  };
}

// One-way time of a ping-pong through the transport (send/recv: isend/irecv + wait).
Run transport_pingpong(Setup& s) {
  return [&s](int n) {
    return timed_loop(n,
                      [&] {
                        if (s.rank == 0) {
                          s.t.send(s.sbuf.data(), s.bytes, s.peer, 1);
                          s.t.recv(s.rbuf.data(), s.bytes, s.peer, 2);
                        } else {
                          s.t.recv(s.rbuf.data(), s.bytes, s.peer, 1);
                          s.t.send(s.sbuf.data(), s.bytes, s.peer, 2);
                        }
                      }) /
           (2.0 * n);
  };
}

// Time per message of a window of MPI_Isend / MPI_Irecv, MPI_Waitall and an ack.
Run raw_window(Setup& s) {
  return [&s](int) {
    constexpr int kWindow = Setup::kWindow;
    return timed_loop(s.n_win,
                      [&] {
                        for (int k = 0; k < kWindow; ++k) {
                          if (s.rank == 0)
                            MPI_Isend(s.sbuf.data(), (int)s.bytes, MPI_BYTE, s.peer, 3, s.raw_comm, &s.mreqs[k]);
                          else
                            MPI_Irecv(s.rbuf.data() + k * s.bytes, (int)s.bytes, MPI_BYTE, s.peer, 3, s.raw_comm,
                                      &s.mreqs[k]);
                        }
                        MPI_Waitall(kWindow, s.mreqs.data(), MPI_STATUSES_IGNORE);
                        if (s.rank == 0)
                          MPI_Recv(s.ack, 4, MPI_BYTE, s.peer, 4, s.raw_comm, MPI_STATUS_IGNORE);
                        else
                          MPI_Send(s.ack, 4, MPI_BYTE, s.peer, 4, s.raw_comm);
                      }) /
           (double(s.n_win) * kWindow);
  };
}

// Time per message of a window through the transport, waited for `chunk` requests at a time.
Run transport_window(Setup& s, int chunk) {
  return [&s, chunk](int) {
    constexpr int kWindow = Setup::kWindow;
    return timed_loop(s.n_win,
                      [&] {
                        for (int k = 0; k < kWindow; ++k)
                          s.treqs[k] = s.rank == 0 ? s.t.isend(s.sbuf.data(), s.bytes, s.peer, 3)
                                                   : s.t.irecv(s.rbuf.data() + k * s.bytes, s.bytes, s.peer, 3);
                        for (int k = 0; k < kWindow; k += chunk)
                          s.t.wait_all(std::span<Request>(s.treqs).subspan(k, chunk));
                        if (s.rank == 0)
                          s.t.recv(s.ack, 4, s.peer, 4);
                        else
                          s.t.send(s.ack, 4, s.peer, 4);
                      }) /
           (double(s.n_win) * kWindow);
  };
}

#if COLLBENCH_BENCH_WATCHDOG
// The same calls with the scope watched (the harness runs a watchdog): MPI_Wait instead of
// MPI_Testall under a Deadline.
Run watched(Setup& s, Run f) {
  return [&s, f](int n) {
    s.t.scope().set_watched(true);
    const double r = f(n);
    s.t.scope().set_watched(false);
    return r;
  };
}
#endif

// ---- rank-local components ----------------------------------------------------------------

Run clock_read(Setup& s) {
  return [&s](int n) { return timed_loop(n, [&] { s.sink = s.sink + Clock::now().time_since_epoch().count(); }) / n; };
}

Run deadline_scope(Setup& s) {
  return [&s](int n) {
    return timed_loop(n,
                      [&] {
                        const Deadline d(s.t.scope());
                        s.sink = s.sink + 1;
                      }) /
           n;
  };
}

#if COLLBENCH_BENCH_WATCHDOG
Run blocking_call(Setup& s) {
  return [&s](int n) {
    return timed_loop(n,
                      [&] {
                        BlockingCall c(s.t.scope(), &s.t, "");
                        c.message(1, 2, 3, true);
                        s.sink = s.sink + 1;
                      }) /
           n;
  };
}
#endif

Run mpi_test_null(Setup& s) {
  return [&s](int n) {
    return timed_loop(n,
                      [&] {
                        MPI_Request r = MPI_REQUEST_NULL;
                        int f = 0;
                        MPI_Test(&r, &f, MPI_STATUS_IGNORE);
                        s.sink = s.sink + f;
                      }) /
           n;
  };
}

Run dynamic_cast_transport(Setup& s) {
  return [&s](int n) {
    Transport* base = &s.t;
    asm volatile("" : "+r"(base));
    return timed_loop(n,
                      [&] {
                        Transport* b = base;
                        asm volatile("" : "+r"(b));
                        s.sink = s.sink + (dynamic_cast<MpiTransport*>(b) != nullptr);
                      }) /
           n;
  };
}

// Every variant, in the order they run and print (the header's lists).
std::vector<Variant> variants(Setup& s) {
  std::vector<Variant> vs;
  vs.emplace_back("raw_allreduce", "", raw_allreduce(s, s.raw_comm));
  // The raw call on the transport's own communicator (made like collbench's), bare and as the
  // library entries publish it.
  vs.emplace_back("raw_allreduce_tcomm", "raw_allreduce", raw_allreduce(s, s.t.comm()));
  vs.emplace_back("blocking_allreduce", "raw_allreduce", blocking_allreduce(s));
  vs.emplace_back("prepared_allreduce", "raw_allreduce", prepared_allreduce(s));
  vs.emplace_back("entry_allreduce", "raw_allreduce", entry_allreduce(s));
  vs.emplace_back("workload_allreduce", "raw_allreduce", workload_allreduce(s));
  vs.emplace_back("sample_allreduce", "raw_allreduce", sample_allreduce(s));
  vs.emplace_back("raw_pingpong", "", raw_pingpong(s));
  vs.emplace_back("transport_pingpong", "raw_pingpong", transport_pingpong(s));
#if COLLBENCH_BENCH_WATCHDOG
  vs.emplace_back("sample_allreduce_w", "raw_allreduce", watched(s, sample_allreduce(s)));
  vs.emplace_back("transport_pingpong_w", "raw_pingpong", watched(s, transport_pingpong(s)));
#endif
  vs.emplace_back("raw_window", "", raw_window(s));
  vs.emplace_back("transport_window", "raw_window", transport_window(s, Setup::kWindow));
#if COLLBENCH_BENCH_WATCHDOG
  vs.emplace_back("transport_window_w", "raw_window", watched(s, transport_window(s, Setup::kWindow)));
  vs.emplace_back("transport_window8_w", "raw_window", watched(s, transport_window(s, 8)));
#endif
  vs.emplace_back("clock_read", "", clock_read(s));
  vs.emplace_back("deadline_scope", "", deadline_scope(s));
#if COLLBENCH_BENCH_WATCHDOG
  vs.emplace_back("blocking_call", "", blocking_call(s));
#endif
  vs.emplace_back("mpi_test_null", "", mpi_test_null(s));
  vs.emplace_back("dynamic_cast", "", dynamic_cast_transport(s));
  return vs;
}

// Warm-up of every variant, then the interleaved repetitions: each variant's ns per call, max
// over ranks, per repetition.
void measure(std::vector<Variant>& vs, const Options& o) {
  for (auto& v : vs) {
    MPI_Barrier(MPI_COMM_WORLD);
    v.run(std::max(1, o.iters / 10));
  }
  for (int r = 0; r < o.reps; ++r)
    for (auto& v : vs) {
      MPI_Barrier(MPI_COMM_WORLD);
      double s = v.run(o.iters);
      MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      v.ns.push_back(s * 1e9);
    }
}

// The table (rank 0): per variant median, min and max, and against its raw variant the median
// per-repetition ratio with its range and the difference of the medians.
void print(const std::vector<Variant>& vs, const Options& o) {
  std::printf(
      "bench_overhead: %zu B, %d calls per sample, %d interleaved repetitions, MPI_THREAD_%s; ns per call, "
      "max over ranks\n",
      o.bytes, o.iters, o.reps, o.funneled ? "FUNNELED" : "SINGLE");
  std::printf("%-20s %10s %10s %10s   %-14s %s\n", "variant", "median", "min", "max", "vs", "ratio median (min-max)");
  for (const auto& v : vs) {
    std::printf("%-20s %10.1f %10.1f %10.1f", v.name.c_str(), median(v.ns), *std::min_element(v.ns.begin(), v.ns.end()),
                *std::max_element(v.ns.begin(), v.ns.end()));
    const auto base = std::find_if(vs.begin(), vs.end(), [&](const Variant& b) { return b.name == v.baseline; });
    if (base != vs.end()) {
      std::vector<double> ratio;
      for (std::size_t i = 0; i < v.ns.size(); ++i) ratio.push_back(v.ns[i] / base->ns[i]);
      std::printf("   %-14s %.3f (%.3f-%.3f)  +%.0f ns", base->name.c_str(), median(ratio),
                  *std::min_element(ratio.begin(), ratio.end()), *std::max_element(ratio.begin(), ratio.end()),
                  median(v.ns) - median(base->ns));
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  const bool funneled = funneled_requested(argc, argv);
  MPI_Init_thread(&argc, &argv, funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_SINGLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Options o = parse_options(argc, argv, funneled);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "bench_overhead: run with mpirun -np 2\n");
    MPI_Finalize();
    return 2;
  }
  {
    Setup s(o, rank);
    std::vector<Variant> vs = variants(s);
    measure(vs, o);
    if (rank == 0) print(vs, o);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
