#pragma once
// A stand-in for GPU memory on the CPU: buffers live in host memory, but the addresses
// handed out point into PROT_NONE reservations, so an algorithm that dereferences a
// "device" pointer instead of going through the MemorySpace crashes at once. Every
// copy/reduce/upload/download is bounds-checked against its allocation, and copies and
// reductions reject partial overlap (undefined for cudaMemcpy and the kernels).
//
// Asynchronous (FakeDeviceMemory(true)): copy and reduce are queued, like work on a CUDA stream,
// and run only at synchronize(), upload, download or deallocate (which wait for the stream in
// CudaMemory too). host_view() then plays a CUDA-aware library that reads and writes device
// memory directly, outside the stream: a test sees every missing stream synchronisation.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/core/memory.hpp"
#include "collectives/transport/device_peer_memory.hpp"

namespace collbench::testing {

class FakeDeviceMemory final : public MemorySpace {
 public:
  explicit FakeDeviceMemory(bool asynchronous = false) : async_(asynchronous) {}
  FakeDeviceMemory(const FakeDeviceMemory&) = delete;
  FakeDeviceMemory& operator=(const FakeDeviceMemory&) = delete;
  ~FakeDeviceMemory() override {
    for (auto& [base, a] : allocs_) release(base, a);
  }

  MemoryKind kind() const override { return MemoryKind::cuda; }

  void* allocate(std::size_t bytes) override {
    void* fake = reserve(bytes);
    allocs_[reinterpret_cast<std::uintptr_t>(fake)] = {static_cast<std::byte*>(host_.allocate(bytes)), bytes,
                                                       reservation(bytes)};
    ++allocations_;
    return fake;
  }
  void deallocate(void* p) noexcept override {
    auto it = allocs_.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == allocs_.end()) std::abort();  // freeing something we never allocated
    run_queue();
    release(it->first, it->second);
    allocs_.erase(it);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (dst == src || bytes == 0) return;
    check_no_partial_overlap(dst, src, bytes, "copy");
    std::byte* d = at(dst, bytes, "copy dst");
    const std::byte* s = at(src, bytes, "copy src");
    enqueue([=] { std::memcpy(d, s, bytes); });
  }
  void reduce(const ReduceOp& op, void* out, const void* a, const void* b, std::size_t count) override {
    if (count == 0) return;
    const std::size_t bytes = count * dtype_size(op.dtype);
    if (out != a) check_no_partial_overlap(out, a, bytes, "reduce");
    if (out != b) check_no_partial_overlap(out, b, bytes, "reduce");
    std::byte* o = at(out, bytes, "reduce out");
    const std::byte *x = at(a, bytes, "reduce a"), *y = at(b, bytes, "reduce b");
    const ReduceFn fn = op.host_fn;
    enqueue([=] { fn(o, x, y, count); });
  }
  void upload(void* dst, const void* host_src, std::size_t bytes) override {
    run_queue();
    if (bytes) std::memcpy(at(dst, bytes, "upload"), host_src, bytes);
  }
  void download(void* host_dst, const void* src, std::size_t bytes) override {
    run_queue();
    if (bytes) std::memcpy(host_dst, at(src, bytes, "download"), bytes);
  }
  void synchronize() override {
    ++syncs_;
    run_queue();
  }

  // The host bytes behind a device range, for a test transport that moves device memory
  // itself (as CUDA-aware MPI does), bypassing the queue.
  void* host_view(const void* p, std::size_t bytes) const { return bytes ? at(p, bytes, "host_view") : nullptr; }

  // Another fake memory's bytes [real, real + bytes) at a fresh fake address of this one, as
  // cudaIpcOpenMemHandle maps a peer's allocation: this memory's copies and reductions reach
  // them, and unmap_alias (before the owner frees them) drops the address, not the bytes.
  void* map_alias(std::byte* real, std::size_t bytes) {
    void* fake = reserve(bytes);
    allocs_[reinterpret_cast<std::uintptr_t>(fake)] = {real, bytes, reservation(bytes), /*alias=*/true};
    return fake;
  }
  void unmap_alias(void* p) noexcept {
    auto it = allocs_.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == allocs_.end() || !it->second.alias) std::abort();  // not an alias of this memory
    run_queue();  // queued work reading the owner's bytes runs before they may go
    release(it->first, it->second);
    allocs_.erase(it);
  }

  std::size_t allocations() const { return allocations_; }
  std::size_t live() const { return allocs_.size(); }
  std::size_t syncs() const { return syncs_; }
  std::size_t queued() const { return queue_.size(); }

 private:
  struct Alloc {
    std::byte* real;
    std::size_t bytes;
    std::size_t len;     // of the PROT_NONE reservation
    bool alias = false;  // another memory's bytes (map_alias): not freed here
  };
  static std::size_t reservation(std::size_t bytes) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return ((bytes ? bytes : 1) + page - 1) / page * page;
  }
  static void* reserve(std::size_t bytes) {
    void* fake = mmap(nullptr, reservation(bytes), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (fake == MAP_FAILED) throw std::bad_alloc();
    return fake;
  }
  void release(std::uintptr_t base, const Alloc& a) noexcept {
    munmap(reinterpret_cast<void*>(base), a.len);
    if (!a.alias) host_.deallocate(a.real);
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
  void enqueue(std::function<void()> work) {
    if (async_)
      queue_.push_back(std::move(work));
    else
      work();
  }
  void run_queue() {
    for (auto& w : queue_) w();
    queue_.clear();
  }
  static void check_no_partial_overlap(const void* x, const void* y, std::size_t bytes, const char* what) {
    const auto a = reinterpret_cast<std::uintptr_t>(x), b = reinterpret_cast<std::uintptr_t>(y);
    if (a < b + bytes && b < a + bytes)
      throw std::logic_error(std::string("fake device memory: overlapping ") + what + " ranges");
  }

  bool async_;
  std::vector<std::function<void()>> queue_;  // the "stream": copies and reductions not yet run
  std::size_t syncs_ = 0;
  HostMemory host_;
  std::map<std::uintptr_t, Alloc> allocs_;  // by fake base address
  std::size_t allocations_ = 0;
};

// DeviceIpc between the rank threads of a test world, each with its own FakeDeviceMemory:
// a handle carries the owner's host bytes (looked up by the owner, on its own thread), and
// open() maps them at a fresh fake address of the opener's memory, as CUDA IPC does.
class FakeIpc final : public DeviceIpc {
 public:
  explicit FakeIpc(FakeDeviceMemory& mine) : mine_(mine) {}
  std::size_t handle_bytes() const override { return sizeof(Handle); }
  void export_handle(const void* p, std::size_t bytes, std::byte* handle) override {
    const Handle h{static_cast<std::byte*>(mine_.host_view(p, bytes)), bytes};
    std::memcpy(handle, &h, sizeof h);
  }
  void* open(const std::byte* handle) override {
    Handle h{};
    std::memcpy(&h, handle, sizeof h);
    ++opened_;
    return mine_.map_alias(h.real, h.bytes);
  }
  void close(void* mapped) noexcept override {
    ++closed_;
    mine_.unmap_alias(mapped);
  }
  int opened() const { return opened_; }
  int closed() const { return closed_; }

 private:
  struct Handle {
    std::byte* real;
    std::size_t bytes;
  };
  FakeDeviceMemory& mine_;
  int opened_ = 0, closed_ = 0;
};

}  // namespace collbench::testing
