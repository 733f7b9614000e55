#include "collectives/gpu/device_transport.hpp"

namespace collbench::gpu {

std::unique_ptr<PeerMemory> DeviceTransport::make_peer_memory() {
  PeerMemory* host = inner().peer_memory();  // collective: every rank asks, whatever ipc_ is
  if (!host || !ipc_) return nullptr;
  return std::make_unique<DevicePeerMemory>(*this, *host, device_, ipc_);
}

}  // namespace collbench::gpu
