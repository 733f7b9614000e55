#pragma once
// A transport whose library reads device buffers itself (CUDA-aware MPI) knows nothing of
// the memory space's stream: a send posted right after a reduce kernel would read the buffer
// before the kernel ran, and a receive could land in a buffer that a queued kernel still
// reads (a ring's scratch slot, reused for the next unit). This wrapper synchronizes the
// memory space before every send and every receive is posted, and otherwise forwards.
// (Completed receives need nothing: the algorithm touches a receive buffer only after
// waiting, and work it then queues runs after the data is in place.)
#include "collectives/gpu/device_transport.hpp"

namespace collbench::gpu {

class StreamOrderedTransport final : public DeviceTransport {
 public:
  // `inner` must already move buffers of `device` (e.g. MpiTransport::set_memory(device)).
  // `ipc`: device peer memory (device_transport.hpp), or none.
  StreamOrderedTransport(Transport& inner, MemorySpace& device, std::shared_ptr<DeviceIpc> ipc = nullptr)
      : DeviceTransport(inner, device, std::move(ipc)) {}
  Request isend(const void* buf, std::size_t bytes, int peer, int tag) override;
  Request irecv(void* buf, std::size_t bytes, int peer, int tag) override;

 protected:
  // A sub-transport of the inner moves the same device buffers: order it the same way.
  std::unique_ptr<Transport> wrap(Transport& inner_sub) override;
};

}  // namespace collbench::gpu
