#pragma once
// Which (backend, device) pairs this build can run, and the factory for the measured
// transport. The CUDA/NCCL layer plugs in here: a new backend adds a Backend subclass and a
// branch in check_backend()/make_backend(); nothing else in the harness changes.
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "collectives/transport/transport.hpp"
#include "harness/plan/run_config.hpp"
#include "harness/run/topology.hpp"

namespace collbench {

// Owns everything the measured transport needs (communicator, streams, memory space).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Transport& transport() = 0;
  // Adds what the run record should say about the device path (versions, transfer mode).
  virtual void describe(Versions&) const {}

  // --device cuda: the GPU's free bytes now (cudaMemGetInfo, 0 = unknown), how many ranks of
  // this node share it, and whether MPI stages device buffers through pinned host memory; for
  // the per-point memory check. Nothing on the CPU path.
  struct DeviceBudget {
    std::uint64_t free = 0;
    int ranks_per_device = 1;
    bool staged = false;
  };
  virtual std::optional<DeviceBudget> device_budget() const { return std::nullopt; }
};

// Throws UsageError for an unknown or unavailable backend/device, e.g. --device cuda on a
// machine without a GPU (no MPI needed, so it runs before any output exists).
void check_backend(const RunConfig& cfg);

// The measured transport over its own duplicate of `world`, under `scope` (the rank's call
// scope, shared with the control plane and watched by the watchdog). Collective over `world`.
std::unique_ptr<Backend> make_backend(const RunConfig& cfg, MPI_Comm world, std::shared_ptr<CallScope> scope);

}  // namespace collbench
