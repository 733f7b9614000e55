#include "harness/backend.hpp"

#include <exception>
#include <memory>

#include "collectives/transport/mpi/mpi_transport.hpp"

namespace collbench {
namespace {

// MPI point-to-point on a duplicated communicator, so algorithm traffic is isolated from the
// harness's control messages and from MPI library collectives of other communicators.
// When destroyed by an exception (a timeout, a dead peer), it deliberately leaves the
// communicator and its pending requests alone: the job is about to be aborted, and tearing
// down a failed communication layer can block.
class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(MPI_Comm world) {
    COLLBENCH_MPI_CHECK(MPI_Comm_dup(world, &comm_), nullptr);
    transport_ = std::make_unique<MpiTransport>(comm_);
  }
  ~MpiBackend() override {
    if (std::uncaught_exceptions() > 0) {
      (void)transport_.release();
      return;
    }
    transport_.reset();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  Transport& transport() override { return *transport_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::unique_ptr<MpiTransport> transport_;
};

}  // namespace

void check_backend(const RunConfig& cfg) {
  if (cfg.backend == "nccl")
    throw UsageError("--backend nccl: not yet supported (this build has no NCCL backend); accepted: mpi");
  if (cfg.backend != "mpi") throw UsageError("unknown --backend '" + cfg.backend + "'; accepted: mpi, nccl");
  if (cfg.device == "cuda")
    throw UsageError("--device cuda: not yet supported (this build has no CUDA memory space); accepted: cpu");
  if (cfg.device != "cpu") throw UsageError("unknown --device '" + cfg.device + "'; accepted: cpu, cuda");
}

std::unique_ptr<Backend> make_backend(const RunConfig& cfg, MPI_Comm world) {
  check_backend(cfg);
  return std::make_unique<MpiBackend>(world);
}

}  // namespace collbench
