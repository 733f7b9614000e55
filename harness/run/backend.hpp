#pragma once
// Which (backend, device) pairs this build can run, and the factory for the measured
// transport. The CUDA/NCCL layer plugs in here: a new backend adds a Backend subclass and a
// branch in check_backend()/make_backend(); nothing else in the harness changes.
#include <mpi.h>

#include <memory>

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
};

// Throws UsageError for an unknown or unavailable backend/device, e.g. --device cuda on a
// machine without a GPU (no MPI needed, so it runs before any output exists).
void check_backend(const RunConfig& cfg);

// The measured transport over its own duplicate of `world`, under `scope` (the rank's call
// scope, shared with the control plane and watched by the watchdog). Collective over `world`.
std::unique_ptr<Backend> make_backend(const RunConfig& cfg, MPI_Comm world, std::shared_ptr<CallScope> scope);

}  // namespace collbench
