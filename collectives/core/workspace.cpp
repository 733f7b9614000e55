#include "collectives/core/workspace.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "collectives/core/error.hpp"

namespace collbench {

void* Workspace::get(std::size_t bytes, int slot) {
  if (slot < 0 || slot >= kSlots) throw Error("workspace slot " + std::to_string(slot) + " out of range [0, 16)");
  if (slots_.size() <= static_cast<std::size_t>(slot)) slots_.resize(slot + 1);
  Buffer& b = slots_[slot];
  if (b.size() < bytes) {
    // Small requests grow geometrically (a size sweep reallocates O(log) times, never inside a
    // point); from 64 MiB up the exact size, so scratch never doubles a large message's memory.
    constexpr std::size_t kExactFrom = std::size_t{64} << 20;
    const std::size_t grown = bytes < kExactFrom ? std::max<std::size_t>(4096, std::bit_ceil(bytes)) : bytes;
    b = Buffer();  // free the old one first: peak memory is the new size, not old + new
    b = Buffer(*space_, grown);
  }
  return b.data();
}

std::size_t Workspace::bytes_held() const {
  std::size_t n = 0;
  for (const Buffer& b : slots_) n += b.size();
  return n;
}

}  // namespace collbench
