#include "collectives/backends/mpi/mpi_world.hpp"

#include <exception>
#include <thread>

#include "collectives/backends/mpi/mpi_transport.hpp"
#include "collectives/backends/mpi/quiet_comm.hpp"

namespace collbench {
namespace {

MPI_Op mpi_op(World::Reduce op) {
  switch (op) {
    case World::Reduce::sum: return MPI_SUM;
    case World::Reduce::max: return MPI_MAX;
    case World::Reduce::min: return MPI_MIN;
  }
  return MPI_SUM;
}

}  // namespace

MpiWorld::MpiWorld(MPI_Comm parent) : parent_(parent) {
  COLLBENCH_MPI_CHECK(mpi::quiet_dup(parent, &comm_), nullptr);
  COLLBENCH_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), nullptr);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiWorld::~MpiWorld() {
  if (std::uncaught_exceptions() > 0) return;  // failing: the job is about to be aborted
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiWorld::barrier() { COLLBENCH_MPI_CHECK(MPI_Barrier(comm_), nullptr); }

void MpiWorld::allreduce(std::span<double> v, Reduce op) {
  if (v.empty()) return;
  COLLBENCH_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, mpi_op(op), comm_),
                      nullptr);
}

void MpiWorld::allreduce(std::span<std::int64_t> v, Reduce op) {
  if (v.empty()) return;
  COLLBENCH_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_INT64_T, mpi_op(op), comm_),
                      nullptr);
}

void MpiWorld::broadcast(std::span<std::byte> b, int root) {
  if (b.empty()) return;
  COLLBENCH_MPI_CHECK(MPI_Bcast(b.data(), static_cast<int>(b.size()), MPI_BYTE, root, comm_), nullptr);
}

void MpiWorld::allgather(std::span<const std::byte> mine, std::span<std::byte> all) {
  if (mine.empty()) return;
  COLLBENCH_MPI_CHECK(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(),
                                    static_cast<int>(mine.size()), MPI_BYTE, comm_),
                      nullptr);
}

void MpiWorld::send(std::span<const std::byte> b, int peer, int tag) {
  COLLBENCH_MPI_CHECK(MPI_Send(b.data(), static_cast<int>(b.size()), MPI_BYTE, peer, tag, comm_), nullptr);
}

void MpiWorld::recv(std::span<std::byte> b, int peer, int tag) {
  COLLBENCH_MPI_CHECK(MPI_Recv(b.data(), static_cast<int>(b.size()), MPI_BYTE, peer, tag, comm_, MPI_STATUS_IGNORE),
                      nullptr);
}

void MpiWorld::notify(int peer, int tag) {
  COLLBENCH_MPI_CHECK(MPI_Send(nullptr, 0, MPI_BYTE, peer, tag, comm_), nullptr);
}

// Point-to-point, not MPI_Ibarrier: any non-blocking collective leaves Open MPI's libnbc
// progress hook in every later MPI call on this process (quiet_comm.hpp).
void MpiWorld::await_notice(int peer, int tag, std::chrono::microseconds pause) {
  MPI_Request req;
  COLLBENCH_MPI_CHECK(MPI_Irecv(nullptr, 0, MPI_BYTE, peer, tag, comm_, &req), nullptr);
  for (int done = 0;;) {
    COLLBENCH_MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE), nullptr);
    if (done) return;
    std::this_thread::sleep_for(pause);
  }
}

int MpiWorld::node_leader() {
  MPI_Comm local;
  COLLBENCH_MPI_CHECK(mpi::quiet_split_shared(comm_, rank_, &local), nullptr);
  int leader = rank_;
  COLLBENCH_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, local), nullptr);
  MPI_Comm_free(&local);
  return leader;
}

std::string MpiWorld::host_name() const {
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  return std::string(name, static_cast<std::size_t>(len));
}

const char* MpiWorld::describe(Call c) const {
  switch (c) {
    case Call::barrier: return "in the harness's MPI_Barrier (control; some rank never arrived)";
    case Call::allreduce: return "in the harness's MPI_Allreduce (control; some rank never arrived)";
    case Call::broadcast: return "in the harness's MPI_Bcast (control; some rank never arrived)";
    case Call::allgather: return "in the harness's MPI_Allgather (control; some rank never arrived)";
    case Call::topology: return "in the harness's MPI_Comm_split_type/MPI_Allgather (control; some rank never arrived)";
    case Call::send: return "in the harness's MPI_Send (control)";
    case Call::recv: return "in the harness's MPI_Recv (control)";
    case Call::notice: return "in the harness's MPI_Irecv/MPI_Test wait for a notice (control)";
  }
  return "in the harness's control plane";
}

}  // namespace collbench
