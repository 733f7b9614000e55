// RedOp::avg around any algorithm (registry.hpp run_entry), as NCCL defines ncclAvg: floating
// inputs pre-multiplied by 1/n and summed, integers summed and then divided by n.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "collectives/avg.hpp"
#include "collectives/op_traits.hpp"
#include "collectives/registry.hpp"

namespace collbench {
namespace {

// Workspace slots no algorithm uses (they use the low ones): the scaled inputs, and 1/n.
constexpr int kScaledSlot = Workspace::kSlots - 1;
constexpr int kFactorSlot = Workspace::kSlots - 2;
constexpr std::size_t kChunkElems = std::size_t{1} << 16;

bool floating(DType t) {
  return t == DType::float16 || t == DType::bfloat16 || t == DType::float32 || t == DType::float64;
}

void* at(void* p, std::size_t i, DType t) { return static_cast<char*>(p) + i * dtype_size(t); }
const void* at(const void* p, std::size_t i, DType t) { return static_cast<const char*>(p) + i * dtype_size(t); }

// factor[0, chunk) = 1/n in the dtype.
void fill_reciprocal(MemorySpace& m, void* factor, DType dtype, std::size_t chunk, int n) {
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T f{};
    if constexpr (std::is_same_v<T, float16>) f = to_float16(1.0f / static_cast<float>(n));
    else if constexpr (std::is_same_v<T, bfloat16>) f = to_bfloat16(1.0f / static_cast<float>(n));
    else f = static_cast<T>(1.0 / n);
    const std::vector<T> host(chunk, f);
    m.upload(factor, host.data(), chunk * sizeof(T));
  });
}

// out[0, count) = in[0, count) x factor, by the memory space's own prod kernel against a chunk
// of 1/n values (host or device alike).
void multiply(MemorySpace& m, DType dtype, void* out, const void* in, std::size_t count, const void* factor,
              std::size_t chunk) {
  const ReduceOp prod = make_reduce_op(RedOp::prod, dtype);
  for (std::size_t i = 0; i < count; i += chunk) {
    const std::size_t k = std::min(chunk, count - i);
    m.reduce(prod, at(out, i, dtype), at(in, i, dtype), factor, k);
  }
}

// out[0, count) = in[0, count) x (1/n), rounded once per element in the dtype.
void scale(MemorySpace& m, const CollArgs& a, void* out, const void* in, std::size_t count, int n) {
  const std::size_t chunk = std::min(count, kChunkElems);
  if (chunk == 0) return;
  void* factor = a.scratch(a.bytes(chunk), kFactorSlot);
  fill_reciprocal(m, factor, a.dtype, chunk, n);
  multiply(m, a.dtype, out, in, count, factor, chunk);
}

// buf[0, count) /= n for integers, truncating (as C; the sum wraps like the sum op's).
void divide(MemorySpace& m, void* buf, std::size_t count, DType dtype, int n) {
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      const auto div = [n](T v) { return static_cast<T>(static_cast<long long>(v) / n); };
      if (m.kind() == MemoryKind::host) {
        T* p = static_cast<T*>(buf);
        std::transform(p, p + count, p, div);
        return;
      }
      std::vector<T> chunk(std::min(count, kChunkElems));
      for (std::size_t i = 0; i < count; i += chunk.size()) {
        const std::size_t k = std::min(chunk.size(), count - i);
        m.download(chunk.data(), static_cast<T*>(buf) + i, k * sizeof(T));
        std::transform(chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(k), chunk.begin(), div);
        m.upload(static_cast<T*>(buf) + i, chunk.data(), k * sizeof(T));
      }
    }
  });
}

}  // namespace

AvgAround::AvgAround(MemorySpace& m, const CollArgs& a, int world)
    : m_(&m), dtype_(a.dtype), n_(world), active_(a.op.kind == RedOp::avg), floating_(floating(a.dtype)) {
  if (!active_ || !floating_) return;
  chunk_ = kChunkElems;
  factor_ = std::make_shared<Buffer>(m, chunk_ * dtype_size(dtype_));
  fill_reciprocal(m, factor_->data(), dtype_, chunk_, world);
}

void AvgAround::in(void* dst, const void* src, std::size_t elems) const {
  if (active_ && floating_) return multiply(*m_, dtype_, dst, src, elems, factor_->data(), chunk_);
  if (dst != src) m_->copy(dst, src, elems * dtype_size(dtype_));
}

void AvgAround::out(void* buf, std::size_t elems) const {
  if (active_ && !floating_) divide(*m_, buf, elems, dtype_, n_);
}

void run_entry(const AlgoEntry& e, Transport& t, const CollArgs& a) {
  if (runs_as_is(e, a)) return e.run(t, a);
  const int n = t.size();
  CollArgs sum = a;
  sum.op = make_reduce_op(RedOp::sum, a.dtype);
  if (!floating(a.dtype)) {
    e.run(t, sum);
    if (op_traits(e.op).result_on == Ranks::root && t.rank() != a.root) return;
    return divide(t.memory(), a.recv, recv_elems(e.op, a.count, n), a.dtype, n);
  }
  // Into a copy, then out of place, whatever the call's placement: scaling into recv and running
  // in place would save the buffer, but not every library takes MPI_IN_PLACE (coll/han in 4.1).
  const std::size_t in = send_elems(e.op, a.count, n);
  void* copy = a.scratch(a.bytes(in), kScaledSlot);
  scale(t.memory(), a, copy, a.send, in, n);
  sum.send = copy;
  e.run(t, sum);
}

}  // namespace collbench
