#pragma once
// MemorySpace implementations backed by the CUDA runtime. Internal to collbench_gpu: the
// harness sees them only as MemorySpace through gpu.hpp.
#include <cuda_runtime_api.h>

#include "collectives/core/memory.hpp"

namespace collbench::gpu {

// Device memory of one GPU. Every operation is enqueued on one owned stream, so copies,
// reduce kernels and (for the NCCL transport) communication are ordered as the algorithm
// issued them; upload/download/synchronize wait for the stream.
class CudaMemory final : public MemorySpace {
 public:
  explicit CudaMemory(int device);
  ~CudaMemory() override;
  CudaMemory(const CudaMemory&) = delete;
  CudaMemory& operator=(const CudaMemory&) = delete;

  MemoryKind kind() const override { return MemoryKind::cuda; }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* p) noexcept override;
  void copy(void* dst, const void* src, std::size_t bytes) override;
  void reduce(const ReduceOp& op, void* out, const void* a, const void* b, std::size_t count) override;
  void upload(void* dst, const void* host_src, std::size_t bytes) override;
  void download(void* host_dst, const void* src, std::size_t bytes) override;
  void synchronize() override;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
  int max_blocks_ = 1;  // grid cap for the grid-stride reduce kernels
};

// Page-locked host memory (cudaMallocHost): the staging buffers of the staging transport,
// so device<->host copies run at full PCIe/NVLink-C2C speed. Plain host memory otherwise.
class PinnedHostMemory final : public MemorySpace {
 public:
  MemoryKind kind() const override { return MemoryKind::host; }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* p) noexcept override;
  void copy(void* dst, const void* src, std::size_t bytes) override { host_.copy(dst, src, bytes); }
  void reduce(const ReduceOp& op, void* out, const void* a, const void* b, std::size_t count) override {
    host_.reduce(op, out, a, b, count);
  }
  void upload(void* dst, const void* host_src, std::size_t bytes) override { host_.copy(dst, host_src, bytes); }
  void download(void* host_dst, const void* src, std::size_t bytes) override { host_.copy(host_dst, src, bytes); }

 private:
  HostMemory host_;
};

}  // namespace collbench::gpu
