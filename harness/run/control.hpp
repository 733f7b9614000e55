#pragma once
// The harness's own control plane over MPI: agreeing on decisions, reducing timing samples,
// gathering facts. Separate from the measured Transport (its own duplicated communicator), so
// harness traffic can never match an algorithm's messages, whatever the backend measured.
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collectives/transport/call_scope.hpp"
#include "harness/run/clock_sync.hpp"

namespace collbench {

class Control {
 public:
  // Duplicates `parent`. With a `scope`, every call below (and the clock sync's) is published
  // on it, so the rank's watchdog bounds the control plane too (control_call.hpp).
  explicit Control(MPI_Comm parent, std::shared_ptr<CallScope> scope = nullptr);
  ~Control();
  Control(const Control&) = delete;
  Control& operator=(const Control&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }
  // Where calls made on comm() directly publish themselves (ControlCall); may be null.
  CallScope* scope() const { return scope_.get(); }

  void barrier();
  void max_in_place(std::span<double> values);  // element-wise max over ranks, result everywhere
  void sum_in_place(std::span<double> values);  // element-wise sum over ranks, result everywhere
  double broadcast(double v);                   // rank 0's value
  std::uint64_t sum(std::uint64_t v);
  bool any(bool v);
  int broadcast(int v);  // rank 0's value
  std::string broadcast(const std::string& s);
  std::vector<std::string> all_gather(const std::string& s);
  // Every rank's `mine` (the same length on every rank), rank after rank, to every rank.
  std::vector<double> all_gather(std::span<const double> mine);

  // Every rank passes its own error (or none); all get the lowest failing rank's message, so
  // all ranks fail together (or none does).
  std::optional<std::string> agree_error(const std::optional<std::string>& mine);

  // Every rank's clock offset to rank 0 (synchronized-start timing), over this communicator.
  ClockSync& clock() { return *clock_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::shared_ptr<CallScope> scope_;
  int rank_ = 0;
  int size_ = 1;
  std::optional<ClockSync> clock_;
};

}  // namespace collbench
