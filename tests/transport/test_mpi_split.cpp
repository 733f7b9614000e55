// split() over MPI (MPI_Comm_split) under mpirun -np 1..8: the same contract as the thread
// transport's, then the sub-communicators are freed with their parent before MPI_Finalize.
#include <gtest/gtest.h>
#include <mpi.h>


#include "collectives/backends/mpi/mpi_transport.hpp"
#include "transport/split_checks.hpp"

namespace collbench {
namespace {

using namespace std::chrono_literals;

TEST(MpiTransportSplit, Contract) {
  MpiTransport t(MPI_COMM_WORLD);
  t.scope().set_timeout(60s);
  testing::check_split_contract(t);
}

TEST(MpiTransportSplit, SubTransportsOwnTheirCommunicator) {
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MpiTransport t(MPI_COMM_WORLD);
  auto* sub = dynamic_cast<MpiTransport*>(t.split("all-reversed", 0, -world_rank));
  ASSERT_NE(sub, nullptr);
  EXPECT_NE(sub->comm(), MPI_COMM_WORLD);
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(sub->comm(), MPI_COMM_WORLD, &result);
  EXPECT_EQ(result, t.size() == 1 ? MPI_CONGRUENT : MPI_SIMILAR);  // same ranks, reversed
  // The MPI library entries run on a sub-transport's communicator as on any other.
  int mine = world_rank, sum = 0;
  ASSERT_EQ(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, sub->comm()), MPI_SUCCESS);
  EXPECT_EQ(sum, t.size() * (t.size() - 1) / 2);
}

}  // namespace
}  // namespace collbench
