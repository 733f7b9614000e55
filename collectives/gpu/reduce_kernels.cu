// Element-wise reduce kernels, one instantiation per dtype × op. The arithmetic is
// apply<T, Op> from core/elementwise.hpp — the same code the host kernels run — so this file
// only decides how threads walk the arrays.
#include <algorithm>
#include <cstdint>

#include "collectives/core/dtype.hpp"
#include "collectives/core/elementwise.hpp"
#include "collectives/gpu/reduce_kernels.hpp"
#include "collectives/gpu/reduce_plan.hpp"

namespace collbench::gpu {
namespace {

constexpr int kThreads = 256;

// 16-byte packs: one 128-bit load per operand per thread. The first `head` elements (up to
// the first 16-byte boundary, which the three pointers share: reduce_plan.hpp) and the tail
// go one element per thread.
template <class T, RedOp Op>
__global__ void reduce_vector(T* out, const T* a, const T* b, std::size_t n, std::size_t head) {
  constexpr std::size_t kPer = 16 / sizeof(T);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (first < head) out[first] = apply<T, Op>(a[first], b[first]);  // head < 16 <= threads
  out += head;
  a += head;
  b += head;
  n -= head;
  const std::size_t packs = n / kPer;
  for (std::size_t p = first; p < packs; p += stride) {
    const uint4 ra = reinterpret_cast<const uint4*>(a)[p];
    const uint4 rb = reinterpret_cast<const uint4*>(b)[p];
    T xa[kPer], xb[kPer];
    memcpy(xa, &ra, 16);  // register-level reinterpretation; no memory traffic
    memcpy(xb, &rb, 16);
#pragma unroll
    for (std::size_t k = 0; k < kPer; ++k) xa[k] = apply<T, Op>(xa[k], xb[k]);
    uint4 ro;
    memcpy(&ro, xa, 16);
    reinterpret_cast<uint4*>(out)[p] = ro;
  }
  for (std::size_t i = packs * kPer + first; i < n; i += stride) out[i] = apply<T, Op>(a[i], b[i]);
}

// Any alignment: one element per thread per step.
template <class T, RedOp Op>
__global__ void reduce_scalar(T* out, const T* a, const T* b, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = apply<T, Op>(a[i], b[i]);
}

template <class T, RedOp Op>
cudaError_t launch(void* out, const void* a, const void* b, std::size_t n, cudaStream_t s, int max_blocks) {
  const ReducePlan plan = plan_reduce(out, a, b, n, sizeof(T));
  const std::size_t units = plan.vector ? ((n - plan.head) * sizeof(T) + 15) / 16 : n;
  const std::size_t want = (std::max<std::size_t>(units, 1) + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(want < static_cast<std::size_t>(max_blocks) ? want : max_blocks);
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  if (plan.vector)
    reduce_vector<T, Op><<<blocks, kThreads, 0, s>>>(o, x, y, n, plan.head);
  else reduce_scalar<T, Op><<<blocks, kThreads, 0, s>>>(o, x, y, n);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_op(RedOp op, void* out, const void* a, const void* b, std::size_t n, cudaStream_t s, int mb) {
  switch (op) {
    case RedOp::sum: return launch<T, RedOp::sum>(out, a, b, n, s, mb);
    case RedOp::prod: return launch<T, RedOp::prod>(out, a, b, n, s, mb);
    case RedOp::max: return launch<T, RedOp::max>(out, a, b, n, s, mb);
    case RedOp::min: return launch<T, RedOp::min>(out, a, b, n, s, mb);
    case RedOp::avg: return launch<T, RedOp::sum>(out, a, b, n, s, mb);  // the 1/n is run_entry's
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_reduce(RedOp op, DType dtype, void* out, const void* a, const void* b, std::size_t count,
                          cudaStream_t stream, int max_blocks) {
  if (count == 0) return cudaSuccess;
  if (max_blocks < 1) max_blocks = 1;
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launch_op<T>(op, out, a, b, count, stream, max_blocks);
  });
}

}  // namespace collbench::gpu
