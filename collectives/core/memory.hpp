#pragma once
// Where buffers live and how to copy/reduce there. Algorithms never touch memory directly:
// they call these, so the same algorithm runs on host memory and on CUDA device memory.
#include <cstddef>
#include <memory>
#include <string_view>

#include "collectives/core/reduce_op.hpp"

namespace collbench {

enum class MemoryKind { host, cuda };

constexpr std::string_view memory_kind_name(MemoryKind k) { return k == MemoryKind::host ? "cpu" : "cuda"; }

class MemorySpace {
 public:
  virtual ~MemorySpace() = default;
  virtual MemoryKind kind() const = 0;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p) noexcept = 0;
  // Copies within the space; a no-op when dst == src (in-place cases).
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  // out[i] = a[i] (op) b[i] for `count` elements of op.dtype; out may alias a or b.
  virtual void reduce(const ReduceOp& op, void* out, const void* a, const void* b, std::size_t count) = 0;
  // Host <-> space transfers for filling inputs and checking results (not on the timed path).
  virtual void upload(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void download(void* host_dst, const void* src, std::size_t bytes) = 0;
  // Waits for queued work (device streams); host work is synchronous.
  virtual void synchronize() {}
};

// Plain host memory: 64-byte aligned allocations, memcpy, the vectorised host kernels.
class HostMemory final : public MemorySpace {
 public:
  MemoryKind kind() const override { return MemoryKind::host; }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* p) noexcept override;
  void copy(void* dst, const void* src, std::size_t bytes) override;
  void reduce(const ReduceOp& op, void* out, const void* a, const void* b, std::size_t count) override;
  void upload(void* dst, const void* host_src, std::size_t bytes) override { copy(dst, host_src, bytes); }
  void download(void* host_dst, const void* src, std::size_t bytes) override { copy(host_dst, src, bytes); }
};

// An owning allocation in a memory space.
class Buffer {
 public:
  Buffer() = default;
  Buffer(MemorySpace& space, std::size_t bytes) : space_(&space), bytes_(bytes), ptr_(bytes ? space.allocate(bytes) : nullptr) {}
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (ptr_) space_->deallocate(ptr_);
  }
  void* data() const { return ptr_; }
  std::byte* bytes_ptr() const { return static_cast<std::byte*>(ptr_); }
  std::size_t size() const { return bytes_; }

 private:
  void swap(Buffer& o) noexcept {
    std::swap(space_, o.space_);
    std::swap(bytes_, o.bytes_);
    std::swap(ptr_, o.ptr_);
  }
  MemorySpace* space_ = nullptr;
  std::size_t bytes_ = 0;
  void* ptr_ = nullptr;
};

// Pointer arithmetic in elements of a dtype (buffers are void* in type-erased code).
inline void* elem_ptr(void* base, std::size_t elems, DType t) { return static_cast<std::byte*>(base) + elems * dtype_size(t); }
inline const void* elem_ptr(const void* base, std::size_t elems, DType t) {
  return static_cast<const std::byte*>(base) + elems * dtype_size(t);
}

}  // namespace collbench
