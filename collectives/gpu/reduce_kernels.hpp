#pragma once
// Element-wise reduce kernels on a CUDA stream: out[i] = a[i] (op) b[i] with the host's
// arithmetic (core/elementwise.hpp), so device and host results are bit-identical.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "collectives/core/reduce_op.hpp"

namespace collbench::gpu {

// Enqueues the kernel for (op, dtype) on `stream`; `max_blocks` caps the grid (the loop
// is grid-stride). Returns the launch error (cudaSuccess when count == 0).
cudaError_t launch_reduce(RedOp op, DType dtype, void* out, const void* a, const void* b, std::size_t count,
                          cudaStream_t stream, int max_blocks);

}  // namespace collbench::gpu
