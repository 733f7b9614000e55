#include "harness/run/backend.hpp"

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "collectives/gpu/gpu.hpp"
#include "collectives/transport/mpi/mpi_transport.hpp"
#include "collectives/transport/mpi/quiet_comm.hpp"

namespace collbench {
namespace {

// MPI point-to-point on a duplicated communicator, so algorithm traffic is isolated from the
// harness's control messages and from MPI library collectives of other communicators.
// When destroyed by an exception (a timeout, a dead peer), it deliberately leaves the
// communicator and its pending requests alone: the job is about to be aborted, and tearing
// down a failed communication layer can block.
class MpiBackend final : public Backend {
 public:
  MpiBackend(MPI_Comm world, std::shared_ptr<CallScope> scope) {
    COLLBENCH_MPI_CHECK(mpi::quiet_dup(world, &comm_), nullptr);
    transport_ = std::make_unique<MpiTransport>(comm_, std::move(scope));
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

// Every node-local rank's device uuid, in local rank order (fixed-size records: one allgather).
std::vector<std::string> local_uuids(MPI_Comm local, const std::string& mine) {
  int n = 1;
  MPI_Comm_size(local, &n);
  constexpr int kLen = 48;
  char me[kLen] = {};
  mine.copy(me, kLen - 1);
  std::vector<char> all(static_cast<std::size_t>(n) * kLen);
  COLLBENCH_MPI_CHECK(MPI_Allgather(me, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, local), nullptr);
  std::vector<std::string> out;
  for (int r = 0; r < n; ++r) out.emplace_back(all.data() + static_cast<std::size_t>(r) * kLen);
  return out;
}

// The message of the lowest rank with a non-empty one, on every rank ("" when none has one).
std::string agree_message(MPI_Comm comm, const std::string& mine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int first = mine.empty() ? size : rank;
  COLLBENCH_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm), nullptr);
  if (first == size) return {};
  char buf[1024] = {};
  if (rank == first) mine.copy(buf, sizeof buf - 1);
  COLLBENCH_MPI_CHECK(MPI_Bcast(buf, sizeof buf, MPI_CHAR, first, comm), nullptr);
  return buf;
}

// Device memory (a GPU per node-local rank, or shared round robin for --backend mpi) with either NCCL point-to-point or
// MPI moving the device buffers (staged through pinned host memory unless MPI is CUDA-aware).
class DeviceBackend final : public Backend {
 public:
  DeviceBackend(const RunConfig& cfg, MPI_Comm world, std::shared_ptr<CallScope> scope) {
    COLLBENCH_MPI_CHECK(mpi::quiet_dup(world, &comm_), nullptr);
    MPI_Comm local;
    COLLBENCH_MPI_CHECK(mpi::quiet_split_shared(comm_, 0, &local), nullptr);
    int local_rank = 0, local_size = 1;
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_size(local, &local_size);
    device_ = gpu::select_device(local_rank, local_size);
    // Which physical GPU each local rank got: shared (fewer GPUs than ranks) or each its own
    // (one GPU per rank, or Slurm's per-task binding where every rank sees "device 0").
    const gpu::DeviceSharing sharing = gpu::device_sharing(local_uuids(local, gpu::device_uuid(device_)));
    MPI_Comm_free(&local);
    // The run record's figure: the most ranks on one GPU on any node.
    COLLBENCH_MPI_CHECK(MPI_Allreduce(&sharing.ranks_per_device, &ranks_per_device_, 1, MPI_INT, MPI_MAX, comm_),
                        nullptr);
    if (cfg.backend == "nccl") {
      char host[MPI_MAX_PROCESSOR_NAME] = {};
      int len = 0;
      MPI_Get_processor_name(host, &len);
      // Only the nodes with shared GPUs see the problem: agree, so that every rank refuses with
      // the first such node's line (UsageError: exit 2, one line from rank 0).
      if (auto why = agree_message(comm_, gpu::nccl_sharing_error(sharing, host)); !why.empty()) throw UsageError(why);
    }
    memory_ = gpu::make_cuda_memory(device_);
    if (cfg.backend == "nccl") {
      transport_ = gpu::make_nccl_transport(comm_, *memory_, std::move(scope));
    } else {
      mpi_ = std::make_unique<MpiTransport>(comm_, std::move(scope));
      transport_ = gpu::make_mpi_device_transport(*mpi_, *memory_);
      transfer_ = gpu::mpi_is_cuda_aware() ? "cuda-aware" : "staged";
    }
  }
  ~DeviceBackend() override {
    if (std::uncaught_exceptions() > 0) {  // about to abort: see MpiBackend
      (void)transport_.release();
      (void)mpi_.release();
      (void)memory_.release();
      return;
    }
    transport_.reset();  // transports before the memory they use
    mpi_.reset();
    memory_.reset();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  Transport& transport() override { return *transport_; }
  void describe(Versions& v) const override {
    const gpu::Versions g = gpu::versions(device_);
    auto set = [](std::optional<std::string>& dst, const std::string& s) {
      if (!s.empty()) dst = s;
    };
    set(v.gpu, g.device_name);
    set(v.cuda, g.runtime);
    set(v.cuda_driver, g.driver);
    set(v.nccl, g.nccl);
    if (!transfer_.empty()) v.device_transfer = transfer_;
    v.ranks_per_gpu = ranks_per_device_;
  }
  std::optional<DeviceBudget> device_budget() const override {
    return DeviceBudget{gpu::device_memory_info(device_).free, ranks_per_device_, transfer_ == "staged"};
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int device_ = 0;
  std::unique_ptr<MemorySpace> memory_;
  std::unique_ptr<MpiTransport> mpi_;  // under the staging transport (--backend mpi)
  std::unique_ptr<Transport> transport_;
  std::string transfer_;
  int ranks_per_device_ = 1;
};

}  // namespace

void check_backend(const RunConfig& cfg) {
  if (cfg.backend != "mpi" && cfg.backend != "nccl")
    throw UsageError("unknown --backend '" + cfg.backend + "'; accepted: mpi, nccl");
  if (cfg.device != "cpu" && cfg.device != "cuda")
    throw UsageError("unknown --device '" + cfg.device + "'; accepted: cpu, cuda");
  if (cfg.backend == "nccl" && cfg.device != "cuda")
    throw UsageError("--backend nccl moves device memory only; accepted: --backend nccl --device cuda");
  if (cfg.device == "cuda") {
    if (!gpu::built_with_cuda())
      throw UsageError("--device cuda: collbench was built without CUDA; accepted: --device cpu");
    if (cfg.backend == "nccl" && !gpu::built_with_nccl())
      throw UsageError("--backend nccl: collbench was built without NCCL; accepted: --backend mpi");
    std::string why;
    if (gpu::device_count(&why) == 0) throw UsageError("--device cuda: " + why + "; accepted: --device cpu");
  }
}

std::unique_ptr<Backend> make_backend(const RunConfig& cfg, MPI_Comm world, std::shared_ptr<CallScope> scope) {
  check_backend(cfg);
  if (cfg.device == "cuda") return std::make_unique<DeviceBackend>(cfg, world, std::move(scope));
  return std::make_unique<MpiBackend>(world, std::move(scope));
}

}  // namespace collbench
