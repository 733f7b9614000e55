#include "collectives/core/memory.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace collbench {

void* HostMemory::allocate(std::size_t bytes) {
  // Round up: aligned_alloc requires a multiple of the alignment.
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!p) throw std::bad_alloc();
  return p;
}

void HostMemory::deallocate(void* p) noexcept { std::free(p); }

void HostMemory::copy(void* dst, const void* src, std::size_t bytes) {
  if (dst != src && bytes) std::memcpy(dst, src, bytes);
}

void HostMemory::reduce(const ReduceOp& op, void* out, const void* a, const void* b, std::size_t count) {
  if (count) op.host_fn(out, a, b, count);
}

}  // namespace collbench
