// MpiTransport under mpirun -np 2: messages above MPI's int count (2 GiB) go through as one
// request. (Timeouts over MPI are tested end to end: harness.timeout, harness.reliability_hang.)
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <memory>

#include "collectives/backends/mpi/mpi_transport.hpp"

namespace collbench {
namespace {

TEST(MpiTransport, MessageLargerThanIntMaxArrivesWhole) {
  MpiTransport t(MPI_COMM_WORLD);
  ASSERT_EQ(t.size(), 2);
  const std::size_t bytes = (std::size_t{1} << 31) + 12345;  // > INT_MAX, not a whole MiB
  std::unique_ptr<unsigned char[]> buf(new unsigned char[bytes]);  // not zero-filled: 2 GiB
  auto mark = [](std::size_t i) { return static_cast<unsigned char>((i * 2654435761u) >> 24); };
  const std::size_t probes[] = {0, 1, (std::size_t{1} << 20) - 1, std::size_t{1} << 31, bytes - 12345, bytes - 1};
  if (t.rank() == 0) {
    for (std::size_t i : probes) buf[i] = mark(i);
    t.send(buf.get(), bytes, 1, 5);
  } else {
    t.recv(buf.get(), bytes, 0, 5);
    for (std::size_t i : probes) EXPECT_EQ(buf[i], mark(i)) << "byte " << i;
  }
}

}  // namespace
}  // namespace collbench
