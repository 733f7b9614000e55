// The parts of gpu.hpp that need no CUDA: device choice and the MPI capability query.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

#include "collectives/gpu/gpu.hpp"
#include "collectives/gpu/ordered_transport.hpp"

namespace collbench::gpu {

int choose_device(int local_rank, int local_size, int devices, const std::string& why_none) {
  if (local_size < 1 || local_rank < 0 || local_rank >= local_size)
    throw Error("--device cuda: node-local rank " + std::to_string(local_rank) + " is outside [0, " +
                std::to_string(local_size) + ")");
  if (devices <= 0) throw Error("--device cuda: " + (why_none.empty() ? std::string("no CUDA device") : why_none));
  if (devices < local_size)
    throw Error("--device cuda needs one GPU per rank on a node: " + std::to_string(local_size) +
                " ranks share this node but only " + std::to_string(devices) +
                " CUDA device(s) are visible (check --gpus-per-node / CUDA_VISIBLE_DEVICES, or start fewer "
                "ranks per node)");
  return local_rank;
}

bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  // Compile-time support is not enough: the runtime may have CUDA support disabled.
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

std::unique_ptr<Transport> make_mpi_device_transport(MpiTransport& mpi, MemorySpace& device_mem) {
  if (!mpi_is_cuda_aware()) return make_staging_transport(mpi, device_mem);
  mpi.set_memory(device_mem);
  return std::make_unique<StreamOrderedTransport>(mpi, device_mem);
}

}  // namespace collbench::gpu
