// MpiTransport under mpirun -np 2: messages above MPI's int count (2 GiB) go through as one
// request, and the kernel's single copy between the two processes (schedules::peer). (Timeouts
// over MPI are tested end to end: harness.timeout, harness.reliability_hang.)
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <memory>

#include "collectives/backends/mpi/mpi_transport.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/peer.hpp"
#include "common/cases.hpp"

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

// Staged allgather, allreduce and reduce/shm reading the other process's send (the reductions
// also writing its recv) by the kernel (the probe set to from 1 byte to 1 MiB before the first
// call, so they do on every machine): exact on every case, both roots, in place and out of place.
// The thread suites read their own process; here the pids differ.
TEST(MpiTransport, KernelCopyBetweenProcessesIsExact) {
  MpiTransport t(MPI_COMM_WORLD);
  PeerMemory* pm = t.peer_memory();
  ASSERT_NE(pm, nullptr) << "both ranks on one node";
  pm->set_kernel_copy_probe({.available = true, .from_bytes = 1, .bytes = {std::size_t{1} << 20}});
  const std::int64_t pid = local_buffer(nullptr).pid;
  std::int64_t peer_pid = 0;
  MPI_Sendrecv(&pid, 1, MPI_INT64_T, 1 - t.rank(), 0, &peer_pid, 1, MPI_INT64_T, 1 - t.rank(), 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  ASSERT_NE(peer_pid, pid) << "two processes";
  for (Op op : {Op::allgather, Op::allreduce, Op::reduce}) {
    const AlgoEntry* entry = Registry::get().find(op, "shm", "any");
    ASSERT_TRUE(entry && entry->traits.claims);
    ASSERT_TRUE(entry->traits.claims(*pm, 2, CollArgs{.count = 40000}, false).kernel_copy) << op_name(op);
    const auto cases = testing::expand(op, 2, t.rank(), testing::registered_case_space(2));
    ASSERT_TRUE(testing::exact_on_every_case(t, *entry, cases)) << op_name(op);
  }
}

}  // namespace
}  // namespace collbench
