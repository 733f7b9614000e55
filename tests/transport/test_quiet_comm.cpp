// quiet_comm.hpp under real Open MPI ranks: communicators and shared windows made the quiet way
// (and the MPI transport's split and peer memory, which use it) leave libnbc's progress hook
// unregistered, while the plain MPI_Comm_dup of the same parent does register it: the probe
// sees the difference, so a regression back to the plain calls fails here. The plain dup runs
// last: the hook then stays registered for the process.
#include <gtest/gtest.h>
#include <mpi.h>

#include "collectives/backends/mpi/mpi_transport.hpp"
#include "collectives/backends/mpi/quiet_comm.hpp"
#include "collectives/transport/peer_memory.hpp"
#include "common/libnbc_probe.hpp"

namespace collbench {
namespace {

using testing::libnbc_progress_hook_registered;

int size_of(MPI_Comm c) {
  int n = 0;
  MPI_Comm_size(c, &n);
  return n;
}

TEST(QuietComm, MakesCommunicatorsAndWindowsWithoutTheLibnbcHook) {
  COLLBENCH_EXPECT_LIBNBC_HOOK_ABSENT_BEFORE();
  MPI_Comm dup = MPI_COMM_NULL, half = MPI_COMM_NULL, shared = MPI_COMM_NULL;
  ASSERT_EQ(mpi::quiet_dup(MPI_COMM_WORLD, &dup), MPI_SUCCESS);
  int rank = 0;
  MPI_Comm_rank(dup, &rank);
  ASSERT_EQ(mpi::quiet_split(dup, rank % 2, rank, &half), MPI_SUCCESS);
  ASSERT_EQ(mpi::quiet_split_shared(dup, rank, &shared), MPI_SUCCESS);
  void* mine = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  ASSERT_EQ(mpi::on_quiet_copy(
                shared, [&](MPI_Comm c) { return MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, c, &mine, &win); }),
            MPI_SUCCESS);
  EXPECT_EQ(size_of(dup), size_of(MPI_COMM_WORLD));
  EXPECT_EQ(size_of(half), (size_of(MPI_COMM_WORLD) + (rank % 2 == 0 ? 1 : 0)) / 2);
  // The communicators work: a collective on each.
  for (MPI_Comm c : {dup, half, shared}) {
    int one = 1, sum = 0;
    ASSERT_EQ(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c), MPI_SUCCESS);
    EXPECT_EQ(sum, size_of(c));
  }
  EXPECT_EQ(libnbc_progress_hook_registered(), false) << "a quiet call registered libnbc's progress hook";

  MPI_Win_free(&win);
  for (MPI_Comm* c : {&shared, &half, &dup}) MPI_Comm_free(c);
}

TEST(QuietComm, TheTransportsSplitsAndPeerMemoryAreQuiet) {
  COLLBENCH_EXPECT_LIBNBC_HOOK_ABSENT_BEFORE();
  MPI_Comm comm = MPI_COMM_NULL;
  ASSERT_EQ(mpi::quiet_dup(MPI_COMM_WORLD, &comm), MPI_SUCCESS);
  {
    MpiTransport t(comm);
    Transport* sub = t.split("all", 0, t.rank());
    ASSERT_NE(sub, nullptr);
    PeerMemory* pm = sub->peer_memory();  // every rank of this test shares one node
    ASSERT_NE(pm, nullptr);
    void* block = pm->allocate(4096);
    ASSERT_NE(block, nullptr);
    pm->deallocate(block);
    EXPECT_EQ(libnbc_progress_hook_registered(), false) << "split() or peer memory registered libnbc's progress hook";
  }
  MPI_Comm_free(&comm);
}

TEST(QuietComm, TheProbeSeesAPlainDup) {
  COLLBENCH_EXPECT_LIBNBC_HOOK_ABSENT_BEFORE();
  MPI_Comm plain = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &plain), MPI_SUCCESS);
  EXPECT_EQ(libnbc_progress_hook_registered(), true) << "the probe does not see a plain MPI_Comm_dup's hook";
  MPI_Comm_free(&plain);
}

}  // namespace
}  // namespace collbench
