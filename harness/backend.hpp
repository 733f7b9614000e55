#pragma once
// Which (backend, device) pairs this build can run, and the factory for the measured
// transport. The CUDA/NCCL layer plugs in here: a new backend adds a Backend subclass and a
// branch in check_backend()/make_backend(); nothing else in the harness changes.
#include <mpi.h>

#include <memory>

#include "collectives/transport/transport.hpp"
#include "harness/run_config.hpp"

namespace collbench {

// Owns everything the measured transport needs (communicator, streams, memory space).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Transport& transport() = 0;
};

// Throws UsageError for an unknown or unavailable backend/device (no MPI needed).
void check_backend(const RunConfig& cfg);

// The measured transport over its own duplicate of `world`. Collective over `world`.
std::unique_ptr<Backend> make_backend(const RunConfig& cfg, MPI_Comm world);

}  // namespace collbench
