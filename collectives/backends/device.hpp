#pragma once
// The device side shared by the backends that move CUDA memory (mpi, nccl): the rank's GPU
// chosen from its node-local rank, who shares which GPU, the device memory, and the run
// record's device facts (kDeviceVersionKeys). Needs only the World: any bootstrap works.
#include <memory>
#include <string>

#include "collectives/backends/backend.hpp"
#include "collectives/core/memory.hpp"

namespace collbench {

// Why --device cuda cannot run here ("" when it can): no CUDA in this build, or no device.
std::string cuda_unavailable();

class DeviceSide {
 public:
  // Collective over ctx.world. `exclusive`: every rank needs a GPU of its own (NCCL): sharing
  // is refused on every rank with the first such node's line (UsageError).
  DeviceSide(const BackendContext& ctx, bool exclusive);
  ~DeviceSide();
  DeviceSide(const DeviceSide&) = delete;
  DeviceSide& operator=(const DeviceSide&) = delete;

  int device() const { return device_; }
  MemorySpace& memory() { return *memory_; }
  void describe(Facts& f) const;
  Backend::DeviceBudget budget(bool staged) const;
  // On a failing rank (the job is about to be aborted): never free the device memory.
  void leak() { (void)memory_.release(); }

 private:
  int device_ = 0;
  int ranks_per_device_ = 1;
  std::unique_ptr<MemorySpace> memory_;
};

// The message of the lowest rank with a non-empty one, on every rank ("" when none has one).
std::string agree_message(World& world, const std::string& mine);

}  // namespace collbench
