#pragma once
// Scratch memory an algorithm needs beyond its arguments. The caller owns it (like a cuBLAS
// workspace) and passes it in CollArgs, so repeated calls of an algorithm allocate nothing on
// the timed path, the transport stays a pure messaging interface, and whoever owns the memory
// space also decides when scratch is freed (before the space itself).
#include <cstddef>
#include <vector>

#include "collectives/core/memory.hpp"

namespace collbench {

class Workspace {
 public:
  static constexpr int kSlots = 16;
  explicit Workspace(MemorySpace& space) : space_(&space) {}
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // A buffer of at least `bytes` in the space; slots are independent buffers (an algorithm
  // and the schedules it composes use distinct slots). Grown on demand and kept.
  void* get(std::size_t bytes, int slot = 0);
  // Bytes held over all slots (memory accounting, tests).
  std::size_t bytes_held() const;
  void release() noexcept { slots_.clear(); }
  MemorySpace& space() const { return *space_; }

 private:
  MemorySpace* space_;
  std::vector<Buffer> slots_;
};

}  // namespace collbench
