// Tiny MPI probe for the testbed / local-cluster tests (tests/slurm/*.sh).
//   mpi_probe            rank 0 prints one line per rank:
//                        "rank R size S host H local L"   (L = size of MPI_COMM_TYPE_SHARED comm)
//   mpi_probe pingpong   also: rank 0 ping-pongs with every other rank p and prints
//                        "pingpong 0-p host H same_node 0|1 8B_us T 1MiB_GBps B 8B_min_us M
//                         1MiB_best_GBps X"
//                        (T = half round trip, median of 200, M its minimum; B from the median
//                        of 20 x 1 MiB round trips, X from the fastest). The ranks not in the pair wait without
//                        spinning: with 4 ranks on 2 cores, busy-polling bystanders made an
//                        intra-node ping-pong read milliseconds.
#include <mpi.h>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

struct Times {
  double median, min;
};

// A barrier that sleeps between polls, so waiting ranks leave the cores to the measured pair.
static void quiet_barrier() {
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  for (int done = 0;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    timespec ts{0, 200000};
    nanosleep(&ts, nullptr);
  }
}

static Times pingpong(int me, int peer, int initiator, std::vector<char>& buf, size_t bytes,
                       int reps) {
  std::vector<double> t;
  for (int r = 0; r < reps + 5; ++r) {
    double t0 = MPI_Wtime();
    if (me == initiator) {
      MPI_Send(buf.data(), (int)bytes, MPI_CHAR, peer, 7, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), (int)bytes, MPI_CHAR, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), (int)bytes, MPI_CHAR, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), (int)bytes, MPI_CHAR, peer, 7, MPI_COMM_WORLD);
    }
    if (r >= 5) t.push_back((MPI_Wtime() - t0) / 2);
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm shm;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm);
  int local;
  MPI_Comm_size(shm, &local);
  char host[MPI_MAX_PROCESSOR_NAME] = {0};
  int len;
  MPI_Get_processor_name(host, &len);
  std::vector<char> hosts(size * MPI_MAX_PROCESSOR_NAME);
  std::vector<int> locals(size);
  MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts.data(), MPI_MAX_PROCESSOR_NAME,
             MPI_CHAR, 0, MPI_COMM_WORLD);
  MPI_Gather(&local, 1, MPI_INT, locals.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < size; ++r)
      std::printf("rank %d size %d host %s local %d\n", r, size, &hosts[r * MPI_MAX_PROCESSOR_NAME],
                  locals[r]);
    std::fflush(stdout);
  }
  if (argc > 1 && std::strcmp(argv[1], "pingpong") == 0) {
    std::vector<char> buf(1 << 20, 1);
    for (int p = 1; p < size; ++p) {
      quiet_barrier();
      if (rank != 0 && rank != p) continue;
      int peer = rank == 0 ? p : 0;
      Times lat = pingpong(rank, peer, 0, buf, 8, 200);
      Times big = pingpong(rank, peer, 0, buf, 1 << 20, 20);
      if (rank == 0) {
        const char* h = &hosts[p * MPI_MAX_PROCESSOR_NAME];
        std::printf("pingpong 0-%d host %s same_node %d 8B_us %.2f 1MiB_GBps %.3f 8B_min_us %.2f "
                    "1MiB_best_GBps %.3f\n",
                    p, h, std::strcmp(h, host) == 0 ? 1 : 0, lat.median * 1e6,
                    (1 << 20) / big.median / 1e9, lat.min * 1e6, (1 << 20) / big.min / 1e9);
        std::fflush(stdout);
      }
    }
  }
  quiet_barrier();
  MPI_Comm_free(&shm);
  MPI_Finalize();
  return 0;
}
