// The NCCL backend: ranks start with MPI or a launcher without it (collectives/launch/: NCCL
// needs only the World to share its unique id), one GPU per rank, grouped ncclSend/ncclRecv on the device's stream
// (nccl_transport), and NCCL's own collectives with their NCCL_ALGO/NCCL_PROTO variants
// (nccl_library, nccl_variants).
#include <memory>

#include "collectives/backends/backend.hpp"
#include "collectives/backends/device.hpp"
#include "collectives/backends/nccl/nccl_backend.hpp"

namespace collbench {
namespace {

class NcclBackend final : public Backend {
 public:
  explicit NcclBackend(const BackendContext& ctx)
      : device_(ctx, /*exclusive=*/true), transport_(nccl::make_transport(ctx.world, device_.memory(), ctx.scope)) {}
  ~NcclBackend() override {
    if (std::uncaught_exceptions() > 0) {  // about to abort: tearing down NCCL can block
      (void)transport_.release();
      device_.leak();
    }
  }
  Transport& transport() override { return *transport_; }
  void describe(Facts& f) const override {
    device_.describe(f);
    if (std::string v = nccl::version(); !v.empty()) f.emplace_back("nccl", v);
  }
  std::optional<DeviceBudget> device_budget() const override { return device_.budget(false); }

 private:
  DeviceSide device_;  // before the transport, which uses its memory
  std::unique_ptr<Transport> transport_;
};

COLLBENCH_REGISTER_BACKEND(BackendInfo{
    "nccl",
    "NCCL point-to-point (grouped ncclSend/ncclRecv) and NCCL's own collectives; device memory, one GPU per rank",
    {"torchrun", "srun", "spawn", "mpi"},  // without MPI, the launch mesh carries the harness's control
    {"cuda"},
    {"nccl"},
    false,
    [](std::string_view) -> std::string {
      if (std::string why = cuda_unavailable(); !why.empty()) return why;
      if (!nccl::built()) return "--backend nccl: collbench was built without NCCL; accepted: --backend mpi";
      return {};
    },
    [](const BackendContext& ctx) -> std::unique_ptr<Backend> { return std::make_unique<NcclBackend>(ctx); }});

}  // namespace
}  // namespace collbench
