#pragma once
// The element-wise arithmetic of every reduce op, written once for host and device.
// Integers wrap (computed in the unsigned type) so that sum/prod are associative and
// order-independent like MPI's; 16-bit floats compute in float and round once.
#include <cstdint>
#include <type_traits>

#include "collectives/core/half.hpp"
#include "collectives/core/hd.hpp"

namespace collbench {

// avg is NCCL's ncclAvg: its element-wise combination is a sum; the 1/n (pre-scale of floating
// inputs, division of integer results) is applied around the algorithm by run_entry.
enum class RedOp : std::uint8_t { sum, prod, max, min, avg };

template <class T, bool = std::is_integral_v<T>>
struct WrapType {  // floats compute as themselves
  using type = T;
};
template <class T>
struct WrapType<T, true> {  // integers compute unsigned, so overflow wraps instead of being UB
  using type = std::make_unsigned_t<T>;
};

template <class T>
struct Arith {  // integers and native floats
  using U = typename WrapType<T>::type;
  CB_HD_INLINE static T sum(T a, T b) { return static_cast<T>(static_cast<U>(a) + static_cast<U>(b)); }
  CB_HD_INLINE static T prod(T a, T b) {
    // uint8 * uint8 would promote to int and overflow is fine there; wider types multiply as U.
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  }
  CB_HD_INLINE static T max(T a, T b) { return a < b ? b : a; }
  CB_HD_INLINE static T min(T a, T b) { return b < a ? b : a; }
};

template <class H, H (*Round)(float)>
struct HalfArith {  // float16 / bfloat16: widen, operate, round to nearest even
  CB_HD_INLINE static H sum(H a, H b) { return Round(to_float(a) + to_float(b)); }
  CB_HD_INLINE static H prod(H a, H b) { return Round(to_float(a) * to_float(b)); }
  CB_HD_INLINE static H max(H a, H b) { return to_float(a) < to_float(b) ? b : a; }
  CB_HD_INLINE static H min(H a, H b) { return to_float(b) < to_float(a) ? b : a; }
};
template <>
struct Arith<float16> : HalfArith<float16, to_float16> {};
template <>
struct Arith<bfloat16> : HalfArith<bfloat16, to_bfloat16> {};

template <class T, RedOp Op>
CB_HD_INLINE T apply(T a, T b) {
  if constexpr (Op == RedOp::sum || Op == RedOp::avg) return Arith<T>::sum(a, b);
  else if constexpr (Op == RedOp::prod) return Arith<T>::prod(a, b);
  else if constexpr (Op == RedOp::max) return Arith<T>::max(a, b);
  else return Arith<T>::min(a, b);
}

// Runtime-op form for reference computations (tests, verification).
template <class T>
CB_HD_INLINE T apply(RedOp op, T a, T b) {
  switch (op) {
    case RedOp::sum: return apply<T, RedOp::sum>(a, b);
    case RedOp::prod: return apply<T, RedOp::prod>(a, b);
    case RedOp::max: return apply<T, RedOp::max>(a, b);
    case RedOp::min: return apply<T, RedOp::min>(a, b);
    case RedOp::avg: return apply<T, RedOp::avg>(a, b);
  }
  return a;
}

}  // namespace collbench
