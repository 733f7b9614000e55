// The parts of gpu.hpp that need no CUDA: device choice and the MPI capability query.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

#include <algorithm>

#include "collectives/gpu/gpu.hpp"
#include "collectives/gpu/ordered_transport.hpp"

namespace collbench::gpu {

int choose_device(int local_rank, int local_size, int devices, const std::string& why_none) {
  if (local_size < 1 || local_rank < 0 || local_rank >= local_size)
    throw Error("--device cuda: node-local rank " + std::to_string(local_rank) + " is outside [0, " +
                std::to_string(local_size) + ")");
  if (devices <= 0) throw Error("--device cuda: " + (why_none.empty() ? std::string("no CUDA device") : why_none));
  // Round robin: one GPU per rank when there are enough, shared otherwise (or each rank's own
  // single device under Slurm's per-task binding — device_sharing tells these apart).
  return local_rank % devices;
}

DeviceSharing device_sharing(const std::vector<std::string>& uuid_of_local_rank) {
  DeviceSharing s;
  const auto& u = uuid_of_local_rank;
  for (std::size_t i = 0; i < u.size(); ++i) {
    if (u[i].empty()) continue;  // identity unknown: no evidence of sharing
    int on_this = 1;
    for (std::size_t j = 0; j < u.size(); ++j) {
      if (j == i || u[j] != u[i]) continue;
      ++on_this;
      if (s.first < 0 && j > i) {
        s.first = static_cast<int>(i);
        s.second = static_cast<int>(j);
        s.uuid = u[i];
      }
    }
    s.ranks_per_device = std::max(s.ranks_per_device, on_this);
  }
  return s;
}

std::string nccl_sharing_error(const DeviceSharing& s, const std::string& host) {
  if (s.first < 0) return {};
  return "--backend nccl needs one GPU per rank: node-local ranks " + std::to_string(s.first) + " and " +
         std::to_string(s.second) + " on " + host + " both use GPU " + (s.uuid.empty() ? "(unknown uuid)" : s.uuid) +
         " (" + std::to_string(s.ranks_per_device) +
         " ranks on one GPU; NCCL refuses that); accepted: --backend mpi (shares the GPU), fewer ranks per node, or "
         "one GPU per rank (--gpus-per-task=1 / CUDA_VISIBLE_DEVICES)";
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
  return std::make_unique<StreamOrderedTransport>(mpi, device_mem, device_ipc(device_mem));
}

}  // namespace collbench::gpu
