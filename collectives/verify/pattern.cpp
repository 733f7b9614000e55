#include "collectives/verify/pattern.hpp"

#include <algorithm>
#include <vector>

namespace collbench::verify {
namespace {

// Largest integer up to which every partial sum stays exact in the dtype (wrapping
// integers are exact at any size).
long long exact_limit(DType t) {
  switch (t) {
    case DType::bfloat16: return 256;
    case DType::float16: return 2048;
    case DType::float32: return 1LL << 24;
    default: return 1LL << 40;  // integers wrap exactly; float64 has 53 bits
  }
}

bool is_signed(DType t) { return t != DType::uint8; }

// Period of the non-reducing pattern: a prime as large as the dtype holds exactly, so a block
// misplaced by fewer than `period` elements (or ranks) always shows. The period itself is
// never an input value, which makes it the "never written" sentinel.
long long pattern_period(DType t) {
  switch (t) {
    case DType::int8: return 127;
    case DType::uint8:
    case DType::bfloat16: return 251;  // bfloat16 holds integers exactly up to 256
    case DType::float16: return 2039;  // float16: up to 2048
    default: return 65521;
  }
}

// Writes gen(i) for i in [0, n) as T into `dst` in `m`: directly in host memory, else one
// bounded host chunk at a time (never a host copy of the whole buffer).
template <class T, class Gen>
void write_values(MemorySpace& m, void* dst, std::size_t n, Gen&& gen) {
  if (m.kind() == MemoryKind::host) {
    T* out = static_cast<T*>(dst);
    for (std::size_t i = 0; i < n; ++i) out[i] = gen(i);
    return;
  }
  std::vector<T> chunk(std::min(n, kStagingBytes / sizeof(T)));
  for (std::size_t first = 0; first < n; first += chunk.size()) {
    const std::size_t k = std::min(chunk.size(), n - first);
    for (std::size_t j = 0; j < k; ++j) chunk[j] = gen(first + j);
    m.upload(static_cast<T*>(dst) + first, chunk.data(), k * sizeof(T));
  }
}

}  // namespace

long long sentinel_value(DType t) { return pattern_period(t); }

Pointers arrange(const Case& c, void* send_buf, void* recv_buf) {
  const OpTraits& t = op_traits(c.op);
  if (!c.in_place || (t.in_place_on == Ranks::root && c.rank != c.root)) return {send_buf, recv_buf};
  switch (t.in_place) {
    case InPlace::same: return {recv_buf, recv_buf};
    case InPlace::send_in_recv: return {elem_ptr(recv_buf, c.rank * c.count, c.dtype), recv_buf};
    case InPlace::recv_in_send: return {send_buf, elem_ptr(send_buf, c.rank * c.count, c.dtype)};
  }
  return {send_buf, recv_buf};
}

long long input_value(const Case& c, int rank, std::size_t i) {
  const long long r = rank, n = c.world, ii = static_cast<long long>(i % 1000003);  // keep products small
  if (!op_reduces(c.op)) return (r * 37 + ii * 11) % pattern_period(c.dtype);  // distinct per rank and position
  switch (c.redop) {
    case RedOp::sum:
    case RedOp::avg: {
      // At most `limit` in total: ranks past the limit contribute 0 (only in huge worlds).
      const long long limit = exact_limit(c.dtype);
      const long long contributors = std::min(n, limit);
      const long long m = std::clamp(limit / contributors, 1LL, 7LL);
      return r < contributors ? (r + ii) % m + 1 : 0;
    }
    case RedOp::prod:
      // One rank per element contributes 2 or 3, the rest 1: the product is exact anywhere
      // and a missing or doubled contribution changes it.
      return (ii % n == r) ? 2 + ii % 2 : 1;
    case RedOp::max:
    case RedOp::min: return (r * 5 + ii * 3) % 11 - (is_signed(c.dtype) ? 5 : 0);
  }
  return 0;
}

void fill(MemorySpace& m, const Case& c, void* send_buf, void* recv_buf) {
  visit_dtype(c.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T sentinel = from_int<T>(sentinel_value(c.dtype));
    const auto constant = [sentinel](std::size_t) { return sentinel; };
    const std::size_t ns = send_elems(c.op, c.count, c.world), nr = recv_elems(c.op, c.count, c.world);
    const Pointers p = arrange(c, send_buf, recv_buf);
    // Out of place the inputs cover the whole send buffer: no sentinel pass over it first.
    if (p.send != send_buf) write_values<T>(m, send_buf, ns, constant);
    write_values<T>(m, recv_buf, nr, constant);
    write_values<T>(m, p.send, ns, [&](std::size_t i) { return from_int<T>(input_value(c, c.rank, i)); });
  });
}

void fill(const Case& c, void* send_buf, void* recv_buf) {
  HostMemory host;
  fill(host, c, send_buf, recv_buf);
}

}  // namespace collbench::verify
