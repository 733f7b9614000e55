#pragma once
// The control plane of ranks started without MPI (torchrun, srun, --spawn): a TransportWorld
// over a Gloo context of its own, connected through the launch rendezvous. The Gloo backend's
// measured contexts reuse its device (one listening socket and event loop per process); the
// NCCL backend uses it as its World to share NCCL's unique id, as PyTorch's ProcessGroupNCCL
// shares it through its store.
#include <memory>
#include <string>

#include "collectives/backends/gloo/gloo_transport.hpp"
#include "collectives/backends/transport_world.hpp"

namespace collbench {

class GlooWorld final : public TransportWorld {
 public:
  // `control` carries only harness traffic; `address` and `why`: where its device listens and
  // which rule chose it (gloo_mesh::make_device).
  GlooWorld(std::unique_ptr<GlooTransport> control, std::shared_ptr<gloo::transport::Device> device, std::string address,
            std::string why)
      : TransportWorld(*control), control_(std::move(control)), device_(std::move(device)), address_(std::move(address)),
        why_(std::move(why)) {}
  const std::shared_ptr<gloo::transport::Device>& device() const { return device_; }
  const std::string& address() const { return address_; }
  const std::string& why() const { return why_; }

 private:
  std::unique_ptr<GlooTransport> control_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::string address_;
  std::string why_;
};

}  // namespace collbench
