#include "collectives/backends/mpi/preload/context.hpp"

#include <chrono>
#include <vector>

#include "collectives/backends/mpi/quiet_comm.hpp"
#include "collectives/core/error.hpp"

namespace collbench::preload {
namespace {

// The transport's scope: an MPI collective has no timeout, so neither has its service (a
// year); "watched" makes the MPI transport wait in plain blocking MPI calls, as MPI would.
constexpr std::chrono::milliseconds kNoTimeout{365LL * 24 * 3600 * 1000};

}  // namespace

Context::Context(MPI_Comm app, const std::shared_ptr<CallScope>& scope) {
  // Own traffic on a private communicator, made the quiet way (quiet_comm.hpp: a plain dup
  // would leave Open MPI's libnbc progress hook in every later call).
  int rc = mpi::quiet_dup(app, &comm_);
  if (rc != MPI_SUCCESS) throw Error("cannot duplicate the communicator (MPI error " + std::to_string(rc) + ")");
  transport_ = std::make_unique<MpiTransport>(comm_, scope);
  rank_ = transport_->rank();
  size_ = transport_->size();
  // The node layout: each rank's node labelled by its MPI_COMM_TYPE_SHARED group's lowest rank.
  MPI_Comm local = MPI_COMM_NULL;
  rc = mpi::quiet_split_shared(comm_, rank_, &local);
  if (rc != MPI_SUCCESS) throw Error("cannot split the communicator by node (MPI error " + std::to_string(rc) + ")");
  int label = rank_;
  PMPI_Allreduce(MPI_IN_PLACE, &label, 1, MPI_INT, MPI_MIN, local);
  PMPI_Comm_free(&local);
  std::vector<int> node_of(static_cast<std::size_t>(size_));
  PMPI_Allgather(&label, 1, MPI_INT, node_of.data(), 1, MPI_INT, comm_);
  transport_->set_node_layout(node_of);
  const patterns::NodeLayout& nl = transport_->node_layout();
  for (int k = 0; k < nl.nodes(); ++k) layout_.ranks_per_node.push_back(nl.local_size(k));
  work_ = std::make_unique<Workspace>(transport_->memory());
  stage_ = std::make_unique<Workspace>(transport_->memory());
}

Context::~Context() {
  work_.reset();
  stage_.reset();
  transport_.reset();  // its sub-communicators and peer memory (a collective free) first
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (!finalized) PMPI_Comm_free(&comm_);
}

Contexts::Contexts(int keyval) : keyval_(keyval), scope_(std::make_shared<CallScope>(kNoTimeout)) {
  scope_->set_watched(true);
}

bool Contexts::find(MPI_Comm comm, Context*& ctx) {
  if (comm == last_comm_) {  // the communicator of the previous served call: no attribute lookup
    ctx = last_ctx_;
    return true;
  }
  void* attr = nullptr;
  int cached = 0;
  if (PMPI_Comm_get_attr(comm, keyval_, &attr, &cached) != MPI_SUCCESS) return false;
  ctx = cached ? static_cast<Context*>(attr) : nullptr;
  if (ctx) remember(comm, ctx);
  return true;
}

Context* Contexts::make(MPI_Comm comm) {
  auto* ctx = new Context(comm, scope_);
  PMPI_Comm_set_attr(comm, keyval_, ctx);
  remember(comm, ctx);
  return ctx;
}

void Contexts::end() {
  for (MPI_Comm c : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
    void* attr = nullptr;
    int made = 0;  // deleting an attribute never set is an error in Open MPI
    if (PMPI_Comm_get_attr(c, keyval_, &attr, &made) == MPI_SUCCESS && made) PMPI_Comm_delete_attr(c, keyval_);
  }
  PMPI_Comm_free_keyval(&keyval_);
}

}  // namespace collbench::preload
