// tuned_forcing_runner OP ALGO COUNT CALLS [SEGMENT_BYTES]
// Runs the registry entry (OP, ALGO) of the mpi backend CALLS times on MPI_COMM_WORLD
// (float32, sum, root 0, COUNT elements per chunk) and nothing else, so two runs that differ
// only in CALLS differ by exactly the messages of the extra calls: what
// tests/mpi/test_tuned_forcing.py reads from Open MPI's pml/monitoring per pair of ranks, and
// tests/mpich/test_mpich_forcing.py from MPICH's UCX sends (tests/mpich/ucp_count.cpp).
// Rank 0 prints "refused: REASON" when the entry refuses the case, else "config: K=V;..." and
// "wrong: N" (elements of the last call that differ from the expected sum, over all ranks).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "collectives/registry.hpp"
#include "collectives/backends/mpi/mpi_transport.hpp"

using namespace collbench;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  {
    const auto op = argc >= 5 ? parse_op(argv[1]) : std::nullopt;
    if (!op) {
      std::fprintf(stderr, "usage: %s OP ALGO COUNT CALLS [SEGMENT_BYTES]\n", argv[0]);
      MPI_Abort(MPI_COMM_WORLD, 2);
      return 2;  // MPI_Abort is not declared noreturn
    }
    MpiTransport t(MPI_COMM_WORLD);
    t.scope().set_timeout(std::chrono::seconds(60));
    const AlgoEntry* e = Registry::get().find(*op, argv[2], "mpi");
    if (!e) {
      std::fprintf(stderr, "no entry %s/%s on the mpi backend\n", argv[1], argv[2]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int n = t.size(), me = t.rank();
    CollArgs a;
    a.count = std::strtoull(argv[3], nullptr, 10);
    a.dtype = DType::float32;
    a.op = make_reduce_op(RedOp::sum, DType::float32);
    a.segment_bytes = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 0;
    Workspace scratch(t.memory());
    a.workspace = &scratch;
    // Every rank's chunk c holds (rank + 1) * (c + 1): the result is checkable for every op.
    std::vector<float> send(send_elems(*op, a.count, n)), recv(recv_elems(*op, a.count, n));
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = float((me + 1) * (i / std::max<std::size_t>(a.count, 1) + 1));
    a.send = send.data();
    a.recv = recv.data();
    auto why = e->supports ? e->supports(n, a) : std::nullopt;
    const long calls = std::strtol(argv[4], nullptr, 10);
    if (!why) {
      try {  // MPICH's variants refuse in the call (its own check, every rank alike)
        for (long k = 0; k < calls; ++k) run_entry(*e, t, a);
      } catch (const NotSupported& x) {
        why = x.message();
      }
    }
    if (why) {
      if (me == 0) std::printf("refused: %s\n", why->c_str());
    } else {
      // Expected: allreduce every element, allgather chunk r = (r+1)*(r+1)... checked loosely
      // per op on the one property every algorithm must get right.
      const float ranks_sum = float(n) * float(n + 1) / 2;
      long wrong = 0;
      for (std::size_t i = 0; i < recv.size(); ++i) {
        float want = 0;
        const std::size_t c = i / std::max<std::size_t>(a.count, 1);
        switch (*op) {
          case Op::allreduce: want = ranks_sum * float(c + 1); break;
          case Op::broadcast: want = float(c + 1); break;                   // root 0's data
          case Op::allgather: want = float(c + 1); break;                   // chunk c from rank c: (c+1)*1
          case Op::reduce_scatter: want = ranks_sum * float(me + 1); break;  // chunk me of the sum
          default: want = recv[i];
        }
        wrong += recv[i] != want;
      }
      long total = 0;
      MPI_Reduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
      if (me == 0) {
        std::string c;
        if (e->config)
          for (const auto& [k, v] : e->config(*e, a)) c += (c.empty() ? "" : ";") + k + "=" + v;
        std::printf("config: %s\nwrong: %ld\n", c.c_str(), total);
      }
      code = total ? 1 : 0;
    }
  }
  // The entries initialise MPI_T once and leave it so; in Open MPI 4.1 that holds a reference on
  // the monitoring component, which then writes its files at MPI_Finalize only once MPI_T is
  // finalised too (after the communicators above are gone). Not initialised: a harmless error.
  MPI_T_finalize();
  MPI_Finalize();
  return code;
}
