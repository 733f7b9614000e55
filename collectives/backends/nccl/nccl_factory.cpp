// nccl_backend.hpp with NCCL.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "collectives/backends/nccl/nccl_backend.hpp"
#include "collectives/backends/nccl/nccl_transport.hpp"
#include "collectives/gpu/cuda_check.hpp"
#include "collectives/gpu/cuda_memory.hpp"

namespace collbench::nccl {

bool built() { return true; }

std::string version() {
  int x = 0;
  if (ncclGetVersion(&x) != ncclSuccess) return {};
  return std::to_string(x / 10000) + "." + std::to_string(x / 100 % 100) + "." + std::to_string(x % 100);
}

std::unique_ptr<Transport> make_transport(World& world, MemorySpace& cuda_mem, std::shared_ptr<CallScope> scope) {
  auto* m = dynamic_cast<gpu::CudaMemory*>(&cuda_mem);
  if (!m) throw Error("the nccl transport needs memory from gpu::make_cuda_memory");
  COLLBENCH_CUDA_CHECK(cudaSetDevice(m->device()));  // the communicator binds to the current device
  if (!scope) scope = std::make_shared<CallScope>();
  return std::make_unique<NcclTransport>(world, *m, m->stream(), std::move(scope));
}

}  // namespace collbench::nccl
