#pragma once
// --backend mpi on device memory: when the MPI library is CUDA-aware it moves the device
// buffers itself (behind a stream synchronisation before each send and receive); otherwise
// every message is staged through pinned host memory. Either way, with ranks on one node,
// CUDA IPC peer memory. `mpi` and `device_mem` must outlive the result.
#include <memory>

#include "collectives/backends/mpi/mpi_transport.hpp"

namespace collbench::mpi {

// True when the MPI library says it can move device buffers itself (MPIX_Query_cuda_support);
// false when it cannot or cannot say.
bool is_cuda_aware();

std::unique_ptr<Transport> make_device_transport(MpiTransport& mpi, MemorySpace& device_mem);

}  // namespace collbench::mpi
