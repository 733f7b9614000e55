#pragma once
// The NCCL backend's build-dependent half (nccl_factory.cpp with NCCL, nccl_none.cpp without).
#include <memory>
#include <string>

#include "collectives/backends/world.hpp"
#include "collectives/transport/transport.hpp"

namespace collbench::nccl {

bool built();           // this build has NCCL
std::string version();  // "2.28.9"; "" without NCCL

// NCCL point-to-point on `cuda_mem`'s stream (nccl_transport.hpp has the matching rules).
// Collective over `world` (rank 0's unique id is broadcast over it; not kept). `cuda_mem` must
// come from gpu::make_cuda_memory and outlive the transport. `scope`: the call scope its calls
// run under (the harness's, watched; a fresh one if null).
std::unique_ptr<Transport> make_transport(World& world, MemorySpace& cuda_mem, std::shared_ptr<CallScope> scope = nullptr);

}  // namespace collbench::nccl
