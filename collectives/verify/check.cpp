#include "collectives/verify/check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

namespace collbench::verify {
namespace {

template <class T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) return to_float(v);
  else return static_cast<double>(v);
}

// Element i of the region this rank holds after the op, from the input patterns alone.
template <class T>
T expected(const Case& c, std::size_t i) {
  const auto in = [&](int rank, std::size_t k) { return from_int<T>(input_value(c, rank, k)); };
  const auto fold = [&](std::size_t k) {  // reduction over ranks in rank order, in T
    T acc = in(0, k);
    for (int r = 1; r < c.world; ++r) acc = apply<T>(c.redop, acc, in(r, k));
    return acc;
  };
  const std::size_t chunk = c.count ? i / c.count : 0, off = c.count ? i % c.count : 0;
  switch (c.op) {
    case Op::broadcast: return in(c.root, i);
    case Op::reduce:
    case Op::allreduce: return fold(i);
    case Op::gather:
    case Op::allgather: return in(static_cast<int>(chunk), off);
    case Op::scatter: return in(c.root, c.rank * c.count + i);
    case Op::reduce_scatter: return fold(c.rank * c.count + i);
    case Op::alltoall: return in(static_cast<int>(chunk), c.rank * c.count + off);
  }
  return T{};
}

// Machine epsilon (ulp of 1) of a floating type.
template <class T>
double epsilon() {
  if constexpr (std::is_same_v<T, float16>) return 0x1p-10;
  else if constexpr (std::is_same_v<T, bfloat16>) return 0x1p-7;
  else return std::numeric_limits<T>::epsilon();
}

// avg (NCCL's ncclAvg): element i's expected value and how far a result may be from it.
// Integers: the (wrapping) sum divided by n, truncating: exact. Floats: the exact mean; exact
// when n is a power of two (x/n is exact), else within n x eps x max|input| (n roundings of the
// pre-scale and n - 1 of the sum, each at most half an ulp of a value <= max|input|).
template <class T>
std::pair<double, double> expected_avg(const Case& c, std::size_t i) {
  const std::size_t k = c.op == Op::reduce_scatter ? c.rank * c.count + i : i;
  if constexpr (std::is_integral_v<T>) {
    return {static_cast<double>(static_cast<T>(static_cast<long long>(expected<T>(c, i)) / c.world)), 0.0};
  } else {
    double sum = 0, largest = 0;
    for (int r = 0; r < c.world; ++r) {
      const double x = static_cast<double>(input_value(c, r, k));
      sum += x;
      largest = std::max(largest, std::abs(x));
    }
    const bool exact = (c.world & (c.world - 1)) == 0;
    return {sum / c.world, exact ? 0.0 : c.world * epsilon<T>() * largest};
  }
}

// Compares got[0, n), which is elements [first, first + n) of the region, into `out`.
template <class T>
void check_range(const Case& c, const T* got, std::size_t first, std::size_t n, Check& out) {
  const bool avg = op_reduces(c.op) && c.redop == RedOp::avg;
  for (std::size_t j = 0; j < n; ++j) {
    double e, tolerance = 0;
    if (avg) std::tie(e, tolerance) = expected_avg<T>(c, first + j);
    else e = to_double(expected<T>(c, first + j));
    const double g = to_double(got[j]);
    if (!(std::abs(e - g) <= tolerance)) {
      if (out.wrong == 0) out = {0, first + j, e, g};
      ++out.wrong;
    }
  }
}

}  // namespace

Check check(MemorySpace& m, const Case& c, const void* send_buf, const void* recv_buf) {
  Check out;
  if (op_traits(c.op).result_on == Ranks::root && c.rank != c.root) return out;
  const Pointers p = arrange(c, const_cast<void*>(send_buf), const_cast<void*>(recv_buf));
  visit_dtype(c.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::size_t n = recv_elems(c.op, c.count, c.world);
    if (m.kind() == MemoryKind::host) return check_range(c, static_cast<const T*>(p.recv), 0, n, out);
    std::vector<T> chunk(std::min(n, kStagingBytes / sizeof(T)));
    for (std::size_t first = 0; first < n; first += chunk.size()) {
      const std::size_t k = std::min(chunk.size(), n - first);
      m.download(chunk.data(), static_cast<const T*>(p.recv) + first, k * sizeof(T));
      check_range(c, chunk.data(), first, k, out);
    }
  });
  return out;
}

Check check(const Case& c, const void* send_buf, const void* recv_buf) {
  HostMemory host;
  return check(host, c, send_buf, recv_buf);
}

Outcome run_in_place(MemorySpace& m, const Case& c, void* send_buf, void* recv_buf, const std::function<void()>& run) {
  fill(m, c, send_buf, recv_buf);
  try {
    run();
  } catch (const NotSupported& e) {
    return {true, e.message(), {}};
  }
  m.synchronize();
  return {false, {}, check(m, c, send_buf, recv_buf)};
}

Outcome run_checked(Transport& t, const AlgoEntry& entry, const Case& c, std::size_t segment_bytes,
                    const ReduceOp* reduce_override, MemorySpace* buffers, int prepared_calls) {
  CollArgs args;
  args.count = c.count;
  args.dtype = c.dtype;
  args.op = reduce_override ? *reduce_override : make_reduce_op(c.redop, c.dtype);
  args.root = c.root;
  args.segment_bytes = segment_bytes;
  if (entry.supports)
    if (auto why = entry.supports(c.world, args)) return {true, *why, {}};

  MemorySpace& m = t.memory();
  MemorySpace& bm = buffers ? *buffers : m;
  const std::size_t es = dtype_size(c.dtype);
  Buffer send(bm, send_elems(c.op, c.count, c.world) * es), recv(bm, recv_elems(c.op, c.count, c.world) * es);
  Workspace ws(m);
  args.workspace = &ws;
  const Pointers p = arrange(c, send.data(), recv.data());
  args.send = p.send;
  args.recv = p.recv;
  if (prepared_calls <= 0) return run_in_place(m, c, send.data(), recv.data(), [&] { run_entry(entry, t, args); });
  PreparedCall call;
  Outcome o;
  for (int k = 0; k < prepared_calls && !o.skipped && o.check.wrong == 0; ++k)
    o = run_in_place(m, c, send.data(), recv.data(), [&] {
      if (!call) call = entry.prepare(t, args);  // binding may refuse (NotSupported: a skip)
      call();
    });
  return o;
}

}  // namespace collbench::verify
