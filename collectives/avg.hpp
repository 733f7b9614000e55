#pragma once
// RedOp::avg as NCCL defines ncclAvg, for code that reduces with a plain sum: floating inputs
// multiplied by 1/n (rounded once per element in the dtype, by the memory space's prod kernel)
// before the sum, integers summed and then divided by n (truncating, as C). run_entry
// (registry.hpp) applies it around any entry; AvgAround applies it inside a call bound once
// per case (a library algorithm class reducing in place: constructing the class per call would
// put its buffers and slots inside every timed call).
#include <cstddef>
#include <memory>

#include "collectives/collective.hpp"
#include "collectives/core/memory.hpp"

namespace collbench {

class AvgAround {
 public:
  AvgAround() = default;
  // The 1/n factor is made here, once.
  AvgAround(MemorySpace& m, const CollArgs& a, int world);
  bool active() const { return active_; }
  // dst[0, elems) = src[0, elems) scaled (floating avg) or copied (anything else; nothing when
  // dst == src).
  void in(void* dst, const void* src, std::size_t elems) const;
  // buf[0, elems) /= n for integer avg; nothing otherwise.
  void out(void* buf, std::size_t elems) const;

 private:
  MemorySpace* m_ = nullptr;
  DType dtype_ = DType::float32;
  int n_ = 1;
  bool active_ = false;
  bool floating_ = false;
  std::shared_ptr<Buffer> factor_;  // a chunk of 1/n values (floating avg)
  std::size_t chunk_ = 0;
};

}  // namespace collbench
