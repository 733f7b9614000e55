#include "collectives/transport/device_peer_memory.hpp"

#include <exception>

#include "collectives/transport/transport.hpp"

namespace collbench {

DevicePeerMemory::DevicePeerMemory(Transport& t, PeerMemory& host, MemorySpace& device, std::shared_ptr<DeviceIpc> ipc)
    : PeerMemory(t), host_(host), device_(device), ipc_(std::move(ipc)) {
  if (host.size() != size() || host.rank() != rank())
    throw Error("device peer memory: the host peer memory has other ranks", t.error_context());
}

DevicePeerMemory::~DevicePeerMemory() {
  release();
  // The handle block stays with the host peer memory, which frees it with its own blocks.
}

PeerMemory::Mapping DevicePeerMemory::map(std::size_t bytes) {
  const std::size_t hb = ipc_->handle_bytes();
  if (!handles_) handles_ = static_cast<std::byte*>(host_.allocate(hb));  // collective, once
  Mapping m;
  m.base.assign(static_cast<std::size_t>(size()), nullptr);
  void* mine = device_.allocate(bytes);
  m.base[static_cast<std::size_t>(rank())] = static_cast<std::byte*>(mine);
  try {
    ipc_->export_handle(mine, bytes, handles_);
    transport().barrier();  // every handle written
    for (int r = 0; r < size(); ++r)
      if (r != rank())
        m.base[static_cast<std::size_t>(r)] = static_cast<std::byte*>(ipc_->open(host_.peer(handles_, r)));
    transport().barrier();  // every handle read: the block is free for the next swap
  } catch (...) {
    for (int r = 0; r < size(); ++r)
      if (r != rank() && m.base[static_cast<std::size_t>(r)]) ipc_->close(m.base[static_cast<std::size_t>(r)]);
    device_.deallocate(mine);
    throw;
  }
  return m;
}

void DevicePeerMemory::unmap(Mapping& m) noexcept {
  device_.synchronize();  // no queued copy or kernel of this rank reads a peer's block any more
  for (int r = 0; r < size(); ++r)
    if (r != rank()) ipc_->close(m.base[static_cast<std::size_t>(r)]);
  // Unwinding an error: a peer may still read the block and the barrier may never complete;
  // the process is ending, so the block is left to it (as the host peer memories do).
  if (std::uncaught_exceptions() > 0) return;
  try {
    transport().barrier();  // no peer maps the block any more
  } catch (...) {
    return;
  }
  device_.deallocate(m.base[static_cast<std::size_t>(rank())]);
}

}  // namespace collbench
