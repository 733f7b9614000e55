#pragma once
// How the device reduce kernels walk three arrays, decided on the host (and tested without a
// GPU): 16-byte packs (one 128-bit load per operand per thread) whenever the three pointers
// share their misalignment modulo 16 — the common case, since a chunk offset moves every
// buffer alike — after a head of up to 15 bytes done one element per thread; one element per
// thread only when they differ (or an element is itself misaligned).
#include <cstddef>
#include <cstdint>

namespace collbench::gpu {

struct ReducePlan {
  bool vector = false;
  std::size_t head = 0;  // elements before the first 16-byte aligned pack (vector only)
};

inline ReducePlan plan_reduce(const void* out, const void* a, const void* b, std::size_t count, std::size_t elem) {
  const auto o = reinterpret_cast<std::uintptr_t>(out), x = reinterpret_cast<std::uintptr_t>(a),
             y = reinterpret_cast<std::uintptr_t>(b);
  const std::uintptr_t mis = o & 15u;
  if ((x & 15u) != mis || (y & 15u) != mis || mis % elem != 0) return {};
  const std::size_t head = ((16 - mis) & 15u) / elem;
  if (head >= count) return {};  // nothing left to pack
  return {true, head};
}

}  // namespace collbench::gpu
