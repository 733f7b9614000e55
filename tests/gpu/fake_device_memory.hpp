#pragma once
// A stand-in for GPU memory on the CPU: buffers live in host memory, but the addresses
// handed out point into PROT_NONE reservations, so an algorithm that dereferences a
// "device" pointer instead of going through the MemorySpace crashes at once. Every
// copy/reduce/upload/download is bounds-checked against its allocation, and copies and
// reductions reject partial overlap (undefined for cudaMemcpy and the kernels).
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

#include "collectives/core/memory.hpp"

namespace collbench::testing {

class FakeDeviceMemory final : public MemorySpace {
 public:
  FakeDeviceMemory() = default;
  FakeDeviceMemory(const FakeDeviceMemory&) = delete;
  FakeDeviceMemory& operator=(const FakeDeviceMemory&) = delete;
  ~FakeDeviceMemory() override {
    for (auto& [base, a] : allocs_) release(base, a);
  }

  MemoryKind kind() const override { return MemoryKind::cuda; }

  void* allocate(std::size_t bytes) override {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t len = ((bytes ? bytes : 1) + page - 1) / page * page;
    void* fake = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (fake == MAP_FAILED) throw std::bad_alloc();
    allocs_[reinterpret_cast<std::uintptr_t>(fake)] = {static_cast<std::byte*>(host_.allocate(bytes)), bytes, len};
    ++allocations_;
    return fake;
  }
  void deallocate(void* p) noexcept override {
    auto it = allocs_.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == allocs_.end()) std::abort();  // freeing something we never allocated
    release(it->first, it->second);
    allocs_.erase(it);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (dst == src || bytes == 0) return;
    check_no_partial_overlap(dst, src, bytes, "copy");
    std::memcpy(at(dst, bytes, "copy dst"), at(src, bytes, "copy src"), bytes);
  }
  void reduce(const ReduceOp& op, void* out, const void* a, const void* b, std::size_t count) override {
    if (count == 0) return;
    const std::size_t bytes = count * dtype_size(op.dtype);
    if (out != a) check_no_partial_overlap(out, a, bytes, "reduce");
    if (out != b) check_no_partial_overlap(out, b, bytes, "reduce");
    op.host_fn(at(out, bytes, "reduce out"), at(a, bytes, "reduce a"), at(b, bytes, "reduce b"), count);
  }
  void upload(void* dst, const void* host_src, std::size_t bytes) override {
    if (bytes) std::memcpy(at(dst, bytes, "upload"), host_src, bytes);
  }
  void download(void* host_dst, const void* src, std::size_t bytes) override {
    if (bytes) std::memcpy(host_dst, at(src, bytes, "download"), bytes);
  }

  std::size_t allocations() const { return allocations_; }
  std::size_t live() const { return allocs_.size(); }

 private:
  struct Alloc {
    std::byte* real;
    std::size_t bytes;
    std::size_t len;  // of the PROT_NONE reservation
  };
  void release(std::uintptr_t base, const Alloc& a) noexcept {
    munmap(reinterpret_cast<void*>(base), a.len);
    host_.deallocate(a.real);
  }
  // The host address behind [p, p + bytes), which must lie inside one allocation.
  std::byte* at(const void* p, std::size_t bytes, const char* what) const {
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    auto it = allocs_.upper_bound(addr);
    if (it != allocs_.begin()) {
      --it;
      if (addr + bytes <= it->first + it->second.bytes) return it->second.real + (addr - it->first);
    }
    throw std::logic_error(std::string("fake device memory: ") + what + " of " + std::to_string(bytes) +
                           " bytes outside every allocation");
  }
  static void check_no_partial_overlap(const void* x, const void* y, std::size_t bytes, const char* what) {
    const auto a = reinterpret_cast<std::uintptr_t>(x), b = reinterpret_cast<std::uintptr_t>(y);
    if (a < b + bytes && b < a + bytes)
      throw std::logic_error(std::string("fake device memory: overlapping ") + what + " ranges");
  }

  HostMemory host_;
  std::map<std::uintptr_t, Alloc> allocs_;  // by fake base address
  std::size_t allocations_ = 0;
};

}  // namespace collbench::testing
