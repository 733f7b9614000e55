#pragma once
// CUDA runtime return codes -> TransportError naming the call, the CUDA message and file:line.
#include <cuda_runtime_api.h>

#include "collectives/core/error.hpp"

namespace collbench::gpu {

[[noreturn]] void cuda_error(cudaError_t code, const char* call, const char* file, int line);

}  // namespace collbench::gpu

#define COLLBENCH_CUDA_CHECK(call)                                                           \
  do {                                                                                      \
    const cudaError_t cb_cuda_rc_ = (call);                                                 \
    if (cb_cuda_rc_ != cudaSuccess) ::collbench::gpu::cuda_error(cb_cuda_rc_, #call, __FILE__, __LINE__); \
  } while (0)
