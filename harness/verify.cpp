#include "harness/verify.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "collectives/core/memory.hpp"

namespace collbench::verify {
namespace {

template <class T>
T from_int(long long v) {
  if constexpr (std::is_same_v<T, float16>) return to_float16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bfloat16>) return to_bfloat16(static_cast<float>(v));
  else return static_cast<T>(v);
}

template <class T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) return to_float(v);
  else return static_cast<double>(v);
}

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

bool root_only_result(Op op) { return op == Op::reduce || op == Op::gather; }

}  // namespace

Pointers arrange(const Case& c, void* send_buf, void* recv_buf) {
  if (!c.in_place) return {send_buf, recv_buf};
  switch (c.op) {
    case Op::broadcast:
    case Op::reduce:
    case Op::allreduce:
    case Op::alltoall: return {recv_buf, recv_buf};
    case Op::allgather: return {elem_ptr(recv_buf, c.rank * c.count, c.dtype), recv_buf};
    case Op::gather:
      return c.rank == c.root ? Pointers{elem_ptr(recv_buf, c.rank * c.count, c.dtype), recv_buf}
                              : Pointers{send_buf, recv_buf};
    case Op::reduce_scatter: return {send_buf, elem_ptr(send_buf, c.rank * c.count, c.dtype)};
    case Op::scatter:
      return c.rank == c.root ? Pointers{send_buf, elem_ptr(send_buf, c.rank * c.count, c.dtype)}
                              : Pointers{send_buf, recv_buf};
  }
  return {send_buf, recv_buf};
}

long long input_value(const Case& c, int rank, std::size_t i) {
  const long long r = rank, n = c.world, ii = static_cast<long long>(i % 1000003);  // keep products small
  if (!op_reduces(c.op)) return (r * 37 + ii * 11) % pattern_period(c.dtype);  // distinct per rank and position
  switch (c.redop) {
    case RedOp::sum: {
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

void fill(const Case& c, void* send_buf, void* recv_buf) {
  visit_dtype(c.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T sentinel = from_int<T>(pattern_period(c.dtype));
    const std::size_t ns = send_elems(c.op, c.count, c.world), nr = recv_elems(c.op, c.count, c.world);
    std::fill_n(static_cast<T*>(send_buf), ns, sentinel);
    std::fill_n(static_cast<T*>(recv_buf), nr, sentinel);
    const Pointers p = arrange(c, send_buf, recv_buf);
    auto* s = static_cast<T*>(p.send);
    for (std::size_t i = 0; i < ns; ++i) s[i] = from_int<T>(input_value(c, c.rank, i));
  });
}

Check check(const Case& c, const void* send_buf, const void* recv_buf) {
  Check out;
  if (root_only_result(c.op) && c.rank != c.root) return out;
  const Pointers p = arrange(c, const_cast<void*>(send_buf), const_cast<void*>(recv_buf));
  visit_dtype(c.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* got = static_cast<const T*>(p.recv);
    const std::size_t n = recv_elems(c.op, c.count, c.world);
    auto fold = [&](std::size_t i) {  // reduction over ranks in rank order, in T
      T acc = from_int<T>(input_value(c, 0, i));
      for (int r = 1; r < c.world; ++r) acc = apply<T>(c.redop, acc, from_int<T>(input_value(c, r, i)));
      return acc;
    };
    for (std::size_t i = 0; i < n; ++i) {
      T exp{};
      const std::size_t chunk = c.count ? i / c.count : 0, off = c.count ? i % c.count : 0;
      switch (c.op) {
        case Op::broadcast: exp = from_int<T>(input_value(c, c.root, i)); break;
        case Op::reduce:
        case Op::allreduce: exp = fold(i); break;
        case Op::gather:
        case Op::allgather: exp = from_int<T>(input_value(c, static_cast<int>(chunk), off)); break;
        case Op::scatter: exp = from_int<T>(input_value(c, c.root, c.rank * c.count + i)); break;
        case Op::reduce_scatter: exp = fold(c.rank * c.count + i); break;
        case Op::alltoall: exp = from_int<T>(input_value(c, static_cast<int>(chunk), c.rank * c.count + off)); break;
      }
      const double e = to_double(exp), g = to_double(got[i]);
      if (e != g) {
        if (out.wrong == 0) out = {0, i, e, g};
        ++out.wrong;
      }
    }
  });
  return out;
}

}  // namespace collbench::verify

#include <vector>

namespace collbench::verify {

Outcome run_checked(Transport& t, const AlgoEntry& entry, const Case& c, std::size_t segment_bytes,
                    const ReduceOp* reduce_override) {
  CollArgs args;
  args.count = c.count;
  args.dtype = c.dtype;
  args.op = reduce_override ? *reduce_override : make_reduce_op(c.redop, c.dtype);
  args.root = c.root;
  args.segment_bytes = segment_bytes;
  if (entry.supports)
    if (auto why = entry.supports(c.world, args)) return {true, *why, {}};

  const std::size_t es = dtype_size(c.dtype);
  const std::size_t sb = send_elems(c.op, c.count, c.world) * es, rb = recv_elems(c.op, c.count, c.world) * es;
  std::vector<std::byte> hs(sb), hr(rb);
  fill(c, hs.data(), hr.data());
  MemorySpace& m = t.memory();
  Workspace ws(m);
  args.workspace = &ws;
  Buffer ds(m, sb), dr(m, rb);
  m.upload(ds.data(), hs.data(), sb);
  m.upload(dr.data(), hr.data(), rb);
  const Pointers p = arrange(c, ds.data(), dr.data());
  args.send = p.send;
  args.recv = p.recv;
  try {
    entry.run(t, args);
  } catch (const NotSupported& e) {
    return {true, e.message(), {}};
  }
  m.synchronize();
  m.download(hs.data(), ds.data(), sb);
  m.download(hr.data(), dr.data(), rb);
  return {false, {}, check(c, hs.data(), hr.data())};
}

}  // namespace collbench::verify
