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

struct Variant {
  Variant(std::string n, std::string b, std::function<double(int)> r)
      : name(std::move(n)), baseline(std::move(b)), run(std::move(r)) {}
  std::string name;
  std::string baseline;            // the raw variant it is compared with ("" = none)
  std::function<double(int)> run;  // N calls -> seconds per call on this rank
  std::vector<double> ns;          // per repetition: ns per call, max over ranks
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  bool funneled = false;
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--thread")) funneled = !std::strcmp(argv[i + 1], "funneled");
  MPI_Init_thread(&argc, &argv, funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_SINGLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int iters = 20000, reps = 15;
  std::size_t bytes = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--bytes")) bytes = std::strtoull(argv[i + 1], nullptr, 10);
  }
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "bench_overhead: run with mpirun -np 2\n");
    MPI_Finalize();
    return 2;
  }
  {
    MPI_Comm raw_comm, t_comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &raw_comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &t_comm);
    MpiTransport t(t_comm);
    t.scope().set_timeout(std::chrono::seconds(60));
    const AlgoEntry* entry = Registry::get().find(Op::allreduce, "library", "mpi");
    const std::size_t count = std::max<std::size_t>(bytes / 4, 1);
    std::vector<float> send(count, 1.0f), recv(count, 0.0f);
    CollArgs a;
    a.send = send.data();
    a.recv = recv.data();
    a.count = count;
    a.dtype = DType::float32;
    a.op = make_reduce_op(RedOp::sum, DType::float32);
    EntryWorkload w(t, *entry, a);
    CallInfo timed = w.call();
    timed.phase = "timed";

    const int peer = 1 - rank;
    constexpr int kWindow = 64;
    std::vector<char> sbuf(std::max<std::size_t>(bytes, 1), 'x'), rbuf(std::max<std::size_t>(bytes, 1) * kWindow);
    char ack[4] = {0, 0, 0, 0};
    std::vector<MPI_Request> mreqs(kWindow);
    std::vector<Request> treqs(kWindow);

    auto timed_loop = [](int n, auto&& body) {
      const auto t0 = Clock::now();
      for (int k = 0; k < n; ++k) body();
      return std::chrono::duration<double>(Clock::now() - t0).count();
    };
    const int n_win = std::max(1, iters / kWindow);

    std::vector<Variant> vs;
    auto add = [&](Variant v) { vs.push_back(std::move(v)); };
    add(Variant{"raw_allreduce", "", [&](int n) {
                  return timed_loop(n,
                                    [&] {
                                      MPI_Allreduce(send.data(), recv.data(), (int)count, MPI_FLOAT, MPI_SUM, raw_comm);
                                    }) /
                         n;
                }});
    // The raw call on the transport's own communicator (made like collbench's), bare and as the
    // library entries publish it.
    add(Variant{"raw_allreduce_tcomm", "raw_allreduce", [&](int n) {
                  return timed_loop(n,
                                    [&] {
                                      MPI_Allreduce(send.data(), recv.data(), (int)count, MPI_FLOAT, MPI_SUM, t.comm());
                                    }) /
                         n;
                }});
    add(Variant{"blocking_allreduce", "raw_allreduce", [&](int n) {
                  return timed_loop(n,
                                    [&] {
                                      const BlockingCall c(t.scope(), &t, "in MPI_Allreduce");
                                      MPI_Allreduce(send.data(), recv.data(), (int)count, MPI_FLOAT, MPI_SUM, t.comm());
                                    }) /
                         n;
                }});
    const PreparedCall prepared = entry->prepare(t, a);
    add(Variant{"prepared_allreduce", "raw_allreduce",
                [&](int n) { return timed_loop(n, [&] { prepared(); }) / n; }});
    add(Variant{"entry_allreduce", "raw_allreduce",
                [&](int n) { return timed_loop(n, [&] { entry->run(t, a); }) / n; }});
    add(Variant{"workload_allreduce", "raw_allreduce", [&](int n) {
                  Workload& wl = w;
                  return timed_loop(n, [&] { wl.run(); }) / n;
                }});
    add(Variant{"sample_allreduce", "raw_allreduce",
                [&](int n) { return time_sample(t, w, timed, 0, n, SampleStart::back_to_back) * 1e-6; }});
    add(Variant{"raw_pingpong", "", [&](int n) {
                  return timed_loop(
                             n,
                             [&] {
                               if (rank == 0) {
                                 MPI_Send(sbuf.data(), (int)bytes, MPI_BYTE, peer, 1, raw_comm);
                                 MPI_Recv(rbuf.data(), (int)bytes, MPI_BYTE, peer, 2, raw_comm, MPI_STATUS_IGNORE);
                               } else {
                                 MPI_Recv(rbuf.data(), (int)bytes, MPI_BYTE, peer, 1, raw_comm, MPI_STATUS_IGNORE);
                                 MPI_Send(sbuf.data(), (int)bytes, MPI_BYTE, peer, 2, raw_comm);
                               }
                             }) /
                         (2.0 * n);
                }});
    // One-way time of a ping-pong through the transport (send/recv: isend/irecv + wait).
    auto transport_pingpong = [&](int n) {
      return timed_loop(n,
                        [&] {
                          if (rank == 0) {
                            t.send(sbuf.data(), bytes, peer, 1);
                            t.recv(rbuf.data(), bytes, peer, 2);
                          } else {
                            t.recv(rbuf.data(), bytes, peer, 1);
                            t.send(sbuf.data(), bytes, peer, 2);
                          }
                        }) /
             (2.0 * n);
    };
    add(Variant{"transport_pingpong", "raw_pingpong", transport_pingpong});
#if COLLBENCH_BENCH_WATCHDOG
    // The same calls with the scope watched (the harness runs a watchdog): MPI_Wait instead of
    // MPI_Testall under a Deadline.
    auto watched = [&](auto&& f) {
      return [&, f](int n) {
        t.scope().set_watched(true);
        const double s = f(n);
        t.scope().set_watched(false);
        return s;
      };
    };
    add(Variant{"sample_allreduce_w", "raw_allreduce",
                watched([&](int n) { return time_sample(t, w, timed, 0, n, SampleStart::back_to_back) * 1e-6; })});
    add(Variant{"transport_pingpong_w", "raw_pingpong", watched(transport_pingpong)});
#endif
    add(Variant{"raw_window", "", [&](int) {
                  return timed_loop(n_win,
                                    [&] {
                                      for (int k = 0; k < kWindow; ++k) {
                                        if (rank == 0)
                                          MPI_Isend(sbuf.data(), (int)bytes, MPI_BYTE, peer, 3, raw_comm, &mreqs[k]);
                                        else
                                          MPI_Irecv(rbuf.data() + k * bytes, (int)bytes, MPI_BYTE, peer, 3, raw_comm,
                                                    &mreqs[k]);
                                      }
                                      MPI_Waitall(kWindow, mreqs.data(), MPI_STATUSES_IGNORE);
                                      if (rank == 0)
                                        MPI_Recv(ack, 4, MPI_BYTE, peer, 4, raw_comm, MPI_STATUS_IGNORE);
                                      else
                                        MPI_Send(ack, 4, MPI_BYTE, peer, 4, raw_comm);
                                    }) /
                         (double(n_win) * kWindow);
                }});
    // Time per message of a window through the transport, waited for `chunk` requests at a time.
    auto transport_window = [&](int chunk) {
      return [&, chunk](int) {
        return timed_loop(n_win,
                          [&] {
                            for (int k = 0; k < kWindow; ++k)
                              treqs[k] = rank == 0 ? t.isend(sbuf.data(), bytes, peer, 3)
                                                   : t.irecv(rbuf.data() + k * bytes, bytes, peer, 3);
                            for (int k = 0; k < kWindow; k += chunk)
                              t.wait_all(std::span<Request>(treqs).subspan(k, chunk));
                            if (rank == 0)
                              t.recv(ack, 4, peer, 4);
                            else
                              t.send(ack, 4, peer, 4);
                          }) /
               (double(n_win) * kWindow);
      };
    };
    add(Variant{"transport_window", "raw_window", transport_window(kWindow)});
#if COLLBENCH_BENCH_WATCHDOG
    add(Variant{"transport_window_w", "raw_window", watched(transport_window(kWindow))});
    add(Variant{"transport_window8_w", "raw_window", watched(transport_window(8))});
#endif
    // Rank-local components.
    volatile long sink = 0;
    add(Variant{"clock_read", "", [&](int n) {
                  return timed_loop(n, [&] { sink = sink + Clock::now().time_since_epoch().count(); }) / n;
                }});
    add(Variant{"deadline_scope", "", [&](int n) {
                  return timed_loop(n,
                                    [&] {
                                      const Deadline d(t.scope());
                                      sink = sink + 1;
                                    }) /
                         n;
                }});
#if COLLBENCH_BENCH_WATCHDOG
    add(Variant{"blocking_call", "", [&](int n) {
                  return timed_loop(n,
                                    [&] {
                                      BlockingCall c(t.scope(), &t, "");
                                      c.message(1, 2, 3, true);
                                      sink = sink + 1;
                                    }) /
                         n;
                }});
#endif
    add(Variant{"mpi_test_null", "", [&](int n) {
                  return timed_loop(n,
                                    [&] {
                                      MPI_Request r = MPI_REQUEST_NULL;
                                      int f = 0;
                                      MPI_Test(&r, &f, MPI_STATUS_IGNORE);
                                      sink = sink + f;
                                    }) /
                         n;
                }});
    add(Variant{"dynamic_cast", "", [&](int n) {
                  Transport* base = &t;
                  asm volatile("" : "+r"(base));
                  return timed_loop(n,
                                    [&] {
                                      Transport* b = base;
                                      asm volatile("" : "+r"(b));
                                      sink = sink + (dynamic_cast<MpiTransport*>(b) != nullptr);
                                    }) /
                         n;
                }});

    // Warm-up of every variant, then the interleaved repetitions.
    for (auto& v : vs) {
      MPI_Barrier(MPI_COMM_WORLD);
      v.run(std::max(1, iters / 10));
    }
    for (int r = 0; r < reps; ++r)
      for (auto& v : vs) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s = v.run(iters);
        MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        v.ns.push_back(s * 1e9);
      }
    if (rank == 0) {
      std::printf(
          "bench_overhead: %zu B, %d calls per sample, %d interleaved repetitions, MPI_THREAD_%s; ns per call, "
          "max over ranks\n",
          bytes, iters, reps, funneled ? "FUNNELED" : "SINGLE");
      std::printf("%-20s %10s %10s %10s   %-14s %s\n", "variant", "median", "min", "max", "vs",
                  "ratio median (min-max)");
      for (const auto& v : vs) {
        std::printf("%-20s %10.1f %10.1f %10.1f", v.name.c_str(), median(v.ns),
                    *std::min_element(v.ns.begin(), v.ns.end()), *std::max_element(v.ns.begin(), v.ns.end()));
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
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&raw_comm);
  }
  MPI_Finalize();
  return 0;
}
