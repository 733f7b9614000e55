#pragma once
// Peer memory of device buffers: every block is allocated in the node's device memory space
// and shared with the other ranks through IPC handles (cudaIpcGetMemHandle /
// cudaIpcOpenMemHandle for CUDA memory), so the zero-copy algorithms' copies and reduce
// kernels read peers' device buffers directly, as NCCL's intra-node kernels do. The flags stay
// in the host peer memory of the transport beneath (the host polls them), and every raise first
// waits for the device work this rank queued: a peer that sees the flag reads finished data.
#include <cstddef>
#include <memory>

#include "collectives/transport/peer_memory.hpp"

namespace collbench {

// How one device memory space shares its allocations with other processes on the node.
class DeviceIpc {
 public:
  virtual ~DeviceIpc() = default;
  // Bytes of one handle (cudaIpcMemHandle_t: 64).
  virtual std::size_t handle_bytes() const = 0;
  // The handle of `p`, an allocation of `bytes` from this space, written to `handle`.
  virtual void export_handle(const void* p, std::size_t bytes, std::byte* handle) = 0;
  // A peer's allocation, mapped into this process (an address this space's copies and
  // kernels accept); close() unmaps it, before the owner frees it.
  virtual void* open(const std::byte* handle) = 0;
  virtual void close(void* mapped) noexcept = 0;
};

class DevicePeerMemory final : public PeerMemory {
 public:
  // `t`: the device transport (its memory() is `device`); `host`: the host peer memory of the
  // transport beneath, with the same ranks. Both, and `device`, must outlive this.
  DevicePeerMemory(Transport& t, PeerMemory& host, MemorySpace& device, std::shared_ptr<DeviceIpc> ipc);
  ~DevicePeerMemory() override;

  MemoryKind kind() const override { return device_.kind(); }

 protected:
  Mapping map(std::size_t bytes) override;
  void unmap(Mapping& m) noexcept override;
  std::vector<std::atomic<std::uint64_t>*> make_flags() override { return flags_in(host_); }
  void publish() override { device_.synchronize(); }

 private:
  PeerMemory& host_;
  MemorySpace& device_;
  std::shared_ptr<DeviceIpc> ipc_;
  std::byte* handles_ = nullptr;  // a host block of one handle per rank, where ranks swap them
};

}  // namespace collbench
