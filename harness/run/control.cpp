#include "harness/run/control.hpp"

#include <climits>
#include <exception>

#include "collectives/transport/mpi/mpi_transport.hpp"
#include "collectives/transport/mpi/quiet_comm.hpp"
#include "harness/run/control_call.hpp"

namespace collbench {

Control::Control(MPI_Comm parent, std::shared_ptr<CallScope> scope) : scope_(std::move(scope)) {
  COLLBENCH_MPI_CHECK(mpi::quiet_dup(parent, &comm_), nullptr);
  COLLBENCH_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), nullptr);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  clock_.emplace(comm_, rank_, size_, scope_.get());
}

Control::~Control() {
  if (std::uncaught_exceptions() > 0) return;  // failing: the job is about to be aborted
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void Control::barrier() {
  const ControlCall call(scope_.get(), rank_, "in the harness's MPI_Barrier (control; some rank never arrived)");
  COLLBENCH_MPI_CHECK(MPI_Barrier(comm_), nullptr);
}

void Control::max_in_place(std::span<double> v) {
  if (v.empty()) return;
  const ControlCall call(scope_.get(), rank_, "in the harness's MPI_Allreduce (control; some rank never arrived)");
  COLLBENCH_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, comm_),
                      nullptr);
}

void Control::sum_in_place(std::span<double> v) {
  if (v.empty()) return;
  const ControlCall call(scope_.get(), rank_, "in the harness's MPI_Allreduce (control; some rank never arrived)");
  COLLBENCH_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM, comm_),
                      nullptr);
}

double Control::broadcast(double v) {
  const ControlCall call(scope_.get(), rank_, "in the harness's MPI_Bcast (control; some rank never arrived)");
  COLLBENCH_MPI_CHECK(MPI_Bcast(&v, 1, MPI_DOUBLE, 0, comm_), nullptr);
  return v;
}

std::uint64_t Control::sum(std::uint64_t v) {
  const ControlCall call(scope_.get(), rank_, "in the harness's MPI_Allreduce (control; some rank never arrived)");
  COLLBENCH_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_UINT64_T, MPI_SUM, comm_), nullptr);
  return v;
}

bool Control::any(bool v) {
  int x = v ? 1 : 0;
  const ControlCall call(scope_.get(), rank_, "in the harness's MPI_Allreduce (control; some rank never arrived)");
  COLLBENCH_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_LOR, comm_), nullptr);
  return x != 0;
}

int Control::broadcast(int v) {
  const ControlCall call(scope_.get(), rank_, "in the harness's MPI_Bcast (control; some rank never arrived)");
  COLLBENCH_MPI_CHECK(MPI_Bcast(&v, 1, MPI_INT, 0, comm_), nullptr);
  return v;
}

std::string Control::broadcast(const std::string& s) {
  const ControlCall call(scope_.get(), rank_, "in the harness's MPI_Bcast (control; some rank never arrived)");
  int n = broadcast(static_cast<int>(s.size()));
  std::string out = rank_ == 0 ? s : std::string(static_cast<std::size_t>(n), '\0');
  if (n > 0) COLLBENCH_MPI_CHECK(MPI_Bcast(out.data(), n, MPI_CHAR, 0, comm_), nullptr);
  return out;
}

std::vector<std::string> Control::all_gather(const std::string& s) {
  const ControlCall call(scope_.get(), rank_, "in the harness's MPI_Allgather(v) (control; some rank never arrived)");
  const int mine = static_cast<int>(s.size());
  std::vector<int> lens(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
  COLLBENCH_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT, lens.data(), 1, MPI_INT, comm_), nullptr);
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    displs[r] = total;
    total += lens[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  COLLBENCH_MPI_CHECK(MPI_Allgatherv(s.data(), mine, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, comm_),
                      nullptr);
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r) out.push_back(all.substr(displs[r], lens[r]));
  return out;
}

std::vector<double> Control::all_gather(std::span<const double> mine) {
  std::vector<double> all(mine.size() * static_cast<std::size_t>(size_));
  if (mine.empty()) return all;
  const ControlCall call(scope_.get(), rank_, "in the harness's MPI_Allgather (control; some rank never arrived)");
  COLLBENCH_MPI_CHECK(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                                    static_cast<int>(mine.size()), MPI_DOUBLE, comm_),
                      nullptr);
  return all;
}

std::optional<std::string> Control::agree_error(const std::optional<std::string>& mine) {
  const ControlCall call(scope_.get(), rank_, "in the harness's MPI_Allreduce (control; some rank never arrived)");
  int first = mine ? rank_ : INT_MAX;
  COLLBENCH_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm_), nullptr);
  if (first == INT_MAX) return std::nullopt;
  std::string msg = mine.value_or("");
  int n = static_cast<int>(msg.size());
  COLLBENCH_MPI_CHECK(MPI_Bcast(&n, 1, MPI_INT, first, comm_), nullptr);
  msg.resize(static_cast<std::size_t>(n));
  COLLBENCH_MPI_CHECK(MPI_Bcast(msg.data(), n, MPI_CHAR, first, comm_), nullptr);
  return msg;
}

}  // namespace collbench
