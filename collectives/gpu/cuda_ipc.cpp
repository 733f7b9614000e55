// DeviceIpc for CudaMemory: CUDA IPC handles. Every CudaMemory block is its own cudaMalloc,
// so a handle names the block from its base. The peers open it with lazy peer access, which
// covers both ranks sharing one GPU and P2P-capable GPUs of one node.
#include <cstring>

#include "collectives/gpu/cuda_check.hpp"
#include "collectives/gpu/cuda_memory.hpp"
#include "collectives/gpu/gpu.hpp"

namespace collbench::gpu {
namespace {

class CudaIpc final : public DeviceIpc {
 public:
  std::size_t handle_bytes() const override { return sizeof(cudaIpcMemHandle_t); }
  void export_handle(const void* p, std::size_t, std::byte* handle) override {
    cudaIpcMemHandle_t h{};
    COLLBENCH_CUDA_CHECK(cudaIpcGetMemHandle(&h, const_cast<void*>(p)));
    std::memcpy(handle, &h, sizeof h);
  }
  void* open(const std::byte* handle) override {
    cudaIpcMemHandle_t h{};
    std::memcpy(&h, handle, sizeof h);
    void* p = nullptr;
    COLLBENCH_CUDA_CHECK(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
    return p;
  }
  void close(void* mapped) noexcept override { cudaIpcCloseMemHandle(mapped); }
};

}  // namespace

std::shared_ptr<DeviceIpc> device_ipc(MemorySpace& device_mem) {
  if (!dynamic_cast<CudaMemory*>(&device_mem)) throw Error("gpu::device_ipc needs memory from gpu::make_cuda_memory");
  return std::make_shared<CudaIpc>();
}

}  // namespace collbench::gpu
