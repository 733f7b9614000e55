#include "collectives/gpu/cuda_memory.hpp"

#include <string>

#include "collectives/gpu/cuda_check.hpp"
#include "collectives/gpu/reduce_kernels.hpp"

namespace collbench::gpu {

void cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw TransportError(std::string(call) + " failed: " + cudaGetErrorString(code) + " (" + cudaGetErrorName(code) +
                       ") [" + file + ":" + std::to_string(line) + "]");
}

CudaMemory::CudaMemory(int device) : device_(device) {
  COLLBENCH_CUDA_CHECK(cudaSetDevice(device));
  int sms = 0;
  COLLBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  max_blocks_ = sms > 0 ? sms * 4 : 1;  // enough resident blocks to saturate memory bandwidth
  // Non-blocking: no implicit synchronisation with the legacy default stream.
  COLLBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

CudaMemory::~CudaMemory() {
  if (stream_) {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
}

void* CudaMemory::allocate(std::size_t bytes) {
  void* p = nullptr;
  COLLBENCH_CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
  return p;
}

void CudaMemory::deallocate(void* p) noexcept {
  // The stream may still use the buffer: finish it first (cudaFree alone does not order
  // against a non-blocking stream's pending work on every driver).
  cudaStreamSynchronize(stream_);
  cudaFree(p);
}

void CudaMemory::copy(void* dst, const void* src, std::size_t bytes) {
  if (dst == src || bytes == 0) return;
  COLLBENCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void CudaMemory::reduce(const ReduceOp& op, void* out, const void* a, const void* b, std::size_t count) {
  // A planted/custom host kernel cannot run here; the device kernels implement the standard ops only.
  if (op.host_fn && op.host_fn != host_reduce_fn(op.kind, op.dtype))
    throw NotSupported("a custom host reduce kernel cannot run on CUDA device memory");
  COLLBENCH_CUDA_CHECK(launch_reduce(op.kind, op.dtype, out, a, b, count, stream_, max_blocks_));
}

void CudaMemory::upload(void* dst, const void* host_src, std::size_t bytes) {
  if (bytes == 0) return;
  COLLBENCH_CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream_));
  COLLBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));  // host_src may be reused right after
}

void CudaMemory::download(void* host_dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  COLLBENCH_CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
  COLLBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaMemory::synchronize() { COLLBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

void* PinnedHostMemory::allocate(std::size_t bytes) {
  void* p = nullptr;
  COLLBENCH_CUDA_CHECK(cudaMallocHost(&p, bytes ? bytes : 1));
  return p;
}

void PinnedHostMemory::deallocate(void* p) noexcept { cudaFreeHost(p); }

}  // namespace collbench::gpu
