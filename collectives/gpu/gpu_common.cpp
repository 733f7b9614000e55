// The parts of gpu.hpp that need no CUDA: device choice.

#include <algorithm>

#include "collectives/gpu/gpu.hpp"

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

}  // namespace collbench::gpu
