#pragma once
// Exactly predictable inputs for every op, so a result can be checked element by element
// (check.hpp). Inputs are small integers in any dtype, chosen per reduce op so that sums,
// products, maxima and minima are exact in every dtype and every reduction order (integers
// wrap like MPI's). See docs/measurement.md ("Verification").
#include <cstddef>
#include <type_traits>

#include "collectives/collective.hpp"
#include "collectives/core/half.hpp"
#include "collectives/core/memory.hpp"

namespace collbench::verify {

// One rank's view of one collective call.
struct Case {
  Op op = Op::allreduce;
  DType dtype = DType::float32;
  RedOp redop = RedOp::sum;
  std::size_t count = 0;  // elements per rank-chunk (CollArgs::count)
  int root = 0;
  int rank = 0;
  int world = 1;
  bool in_place = false;
};

// Where the op reads and writes inside buffers of send_elems / recv_elems elements,
// following the in-place convention of op_traits.hpp.
struct Pointers {
  void* send;
  void* recv;
};
Pointers arrange(const Case& c, void* send_buf, void* recv_buf);

// Input element `i` of `rank`'s send data, as the integer it encodes.
long long input_value(const Case& c, int rank, std::size_t i);

// The value no input ever takes: marks elements the op should have written but did not.
long long sentinel_value(DType t);

// Host memory moved to or from a device buffer per step when filling or checking: bounds the
// host memory verification needs whatever the message size.
inline constexpr std::size_t kStagingBytes = std::size_t{4} << 20;

// Fills both buffers with the sentinel, then writes this rank's inputs where the op reads
// them. The buffers (send_elems(op,count,world) and recv_elems(...) elements) live in `m`:
// host memory is written in place, device memory through one kStagingBytes host chunk.
void fill(MemorySpace& m, const Case& c, void* send_buf, void* recv_buf);
// The same for host buffers.
void fill(const Case& c, void* send_buf, void* recv_buf);

// An integer as a value of the dtype T (exact for every value the patterns produce).
template <class T>
T from_int(long long v) {
  if constexpr (std::is_same_v<T, float16>) return to_float16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bfloat16>) return to_bfloat16(static_cast<float>(v));
  else return static_cast<T>(v);
}

}  // namespace collbench::verify
