#pragma once
// The base of the device wrappers over a host transport (host staging, stream ordering): its
// memory is the device space, and its peer memory, when the host transport has peer memory
// (every rank on one node) and the device space can share allocations (a DeviceIpc: CUDA
// IPC), is device peer memory over it, so the zero-copy algorithms run on device buffers.
#include <memory>

#include "collectives/transport/device_peer_memory.hpp"
#include "collectives/transport/forwarding_transport.hpp"

namespace collbench::gpu {

class DeviceTransport : public ForwardingTransport {
 public:
  // `ipc` may be null: no device peer memory (the shm algorithms are refused with a reason).
  DeviceTransport(Transport& inner, MemorySpace& device, std::shared_ptr<DeviceIpc> ipc)
      : ForwardingTransport(inner), device_(device), ipc_(std::move(ipc)) {}
  // The peer memory unmaps through this transport (a barrier): it goes before the rest.
  ~DeviceTransport() override { release_splits(); }

  MemorySpace& memory() override { return device_; }
  // Not the inner's host peer memory: device peer memory, made and cached here.
  PeerMemory* peer_memory() override { return Transport::peer_memory(); }

 protected:
  std::unique_ptr<PeerMemory> make_peer_memory() override;
  MemorySpace& device() const { return device_; }
  const std::shared_ptr<DeviceIpc>& ipc() const { return ipc_; }

 private:
  MemorySpace& device_;
  std::shared_ptr<DeviceIpc> ipc_;
};

}  // namespace collbench::gpu
