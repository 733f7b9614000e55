#include "collectives/backends/mpi/mpi_device.hpp"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

#include "collectives/gpu/gpu.hpp"
#include "collectives/gpu/ordered_transport.hpp"

namespace collbench::mpi {

bool is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  // Compile-time support is not enough: the runtime may have CUDA support disabled.
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

std::unique_ptr<Transport> make_device_transport(MpiTransport& mpi, MemorySpace& device_mem) {
  if (!is_cuda_aware()) return gpu::make_staging_transport(mpi, device_mem);
  mpi.set_memory(device_mem);
  return std::make_unique<gpu::StreamOrderedTransport>(mpi, device_mem, gpu::device_ipc(device_mem));
}

}  // namespace collbench::mpi
