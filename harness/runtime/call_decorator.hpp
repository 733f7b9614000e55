#pragma once
// A wrapper around every call of a collective point's algorithm (warm-up, timed, verification):
// the seam through which the test-only faults (fault.hpp: delay, slow) act, so the measured
// path names no fault. A normal run has none: the workload then makes the call and nothing else
// (a library entry its bound call).
#include <cstdint>
#include <functional>
#include <string_view>

namespace collbench {

class CallDecorator {
 public:
  virtual ~CallDecorator() = default;
  // Whether calls of `algo` at `bytes` are wrapped at all (decided once per point).
  virtual bool wraps(std::string_view algo, std::uint64_t bytes) const = 0;
  // Makes `call` (one call of `algo` at `bytes`) and whatever the decorator adds around it.
  virtual void around(std::string_view algo, std::uint64_t bytes, const std::function<void()>& call) const = 0;
};

}  // namespace collbench
