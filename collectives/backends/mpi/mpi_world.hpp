#pragma once
// The harness's control plane over MPI: the same MPI collectives the harness always made, on
// its own duplicate of the parent communicator (errors returned, not fatal), so control
// messages never match an algorithm's.
#include <mpi.h>

#include "collectives/backends/world.hpp"

namespace collbench {

class MpiWorld final : public World {
 public:
  explicit MpiWorld(MPI_Comm parent);  // collective over `parent`
  ~MpiWorld() override;
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  // The communicator the MPI backend's measured side duplicates (MPI_COMM_WORLD's ranks).
  MPI_Comm parent() const { return parent_; }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void barrier() override;
  void allreduce(std::span<double> values, Reduce op) override;
  void allreduce(std::span<std::int64_t> values, Reduce op) override;
  void broadcast(std::span<std::byte> bytes, int root) override;
  void allgather(std::span<const std::byte> mine, std::span<std::byte> all) override;
  void send(std::span<const std::byte> bytes, int peer, int tag) override;
  void recv(std::span<std::byte> bytes, int peer, int tag) override;
  void await_notice(int peer, int tag, std::chrono::microseconds pause) override;
  void notify(int peer, int tag) override;
  int node_leader() override;  // MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)'s lowest rank
  std::string host_name() const override;  // MPI_Get_processor_name
  const char* describe(Call c) const override;

 private:
  MPI_Comm parent_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace collbench
