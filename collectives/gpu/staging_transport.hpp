#pragma once
// Device buffers over a transport that can only move host memory (an MPI that is not
// CUDA-aware, such as Debian's Open MPI; the thread transport in tests).
//
//   isend: device range --download--> staging buffer --inner.isend-->
//   irecv: --inner.irecv--> staging buffer; on completion (wait) --upload--> device range
//
// Written only against MemorySpace and Transport, so it runs on the CPU in tests with a
// fake device memory; production passes CUDA memory and pinned host staging.
// Staging buffers are pooled and reused: after a warm-up call of the same shape, the timed
// path allocates nothing. A receive must be filled exactly (the whole staging buffer is
// uploaded), which is also NCCL's rule and what every algorithm here does.
#include <memory>
#include <vector>

#include "collectives/gpu/device_transport.hpp"

namespace collbench::gpu {

class StagingTransport final : public DeviceTransport {
 public:
  // `staging` allocates the host buffers the inner transport sends from and receives into.
  // `ipc`: device peer memory (device_transport.hpp), or none.
  StagingTransport(Transport& inner, MemorySpace& device, MemorySpace& staging,
                   std::shared_ptr<DeviceIpc> ipc = nullptr);
  StagingTransport(Transport& inner, MemorySpace& device, std::unique_ptr<MemorySpace> owned_staging,
                   std::shared_ptr<DeviceIpc> ipc = nullptr);
  ~StagingTransport() override;

  Request isend(const void* buf, std::size_t bytes, int peer, int tag) override;
  Request irecv(void* buf, std::size_t bytes, int peer, int tag) override;
  void wait(Request& r) override;
  void wait_all(std::span<Request> rs) override;

  // Staging buffers allocated so far (tests check that repeated calls reuse them).
  std::size_t staging_allocations() const { return allocations_; }

 protected:
  // Sub-transports stage through the same staging space, each with its own pool.
  std::unique_ptr<Transport> wrap(Transport& inner_sub) override;

 private:
  struct Staged {
    Buffer buf;
    bool in_use = false;
  };
  struct Slot {  // one request in flight
    Request inner;
    void* device = nullptr;  // receive destination; null for sends
    int staged = -1;         // index into staged_, -1 for 0-byte messages
    bool in_use = false;
  };
  int acquire(std::size_t bytes);
  int new_slot();
  Slot& slot_of(const Request& r);
  void release(int slot);

  std::unique_ptr<MemorySpace> owned_staging_;
  MemorySpace& staging_;
  std::vector<Staged> staged_;
  std::vector<Slot> slots_;
  std::vector<int> free_slots_;
  std::vector<Request> batch_;     // reused by wait_all
  std::vector<int> batch_slots_;
  std::size_t allocations_ = 0;
};

}  // namespace collbench::gpu
