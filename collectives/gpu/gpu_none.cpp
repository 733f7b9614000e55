// gpu.hpp for builds without CUDA: the device path reports itself absent, clearly.
#include "collectives/gpu/gpu.hpp"

namespace collbench::gpu {
namespace {
constexpr const char* kNoCuda = "collbench was built without CUDA";
}

bool built_with_cuda() { return false; }

int device_count(std::string* why_none) {
  if (why_none) *why_none = kNoCuda;
  return 0;
}

int select_device(int local_rank, int local_size) { return choose_device(local_rank, local_size, 0, kNoCuda); }

std::string device_uuid(int) { return {}; }
DeviceMemoryInfo device_memory_info(int) { return {}; }

std::unique_ptr<MemorySpace> make_cuda_memory(int) { throw Error(kNoCuda); }
std::unique_ptr<Transport> make_staging_transport(Transport&, MemorySpace&) { throw Error(kNoCuda); }
std::shared_ptr<DeviceIpc> device_ipc(MemorySpace&) { throw Error(kNoCuda); }

Versions versions(int) { return {}; }

}  // namespace collbench::gpu
