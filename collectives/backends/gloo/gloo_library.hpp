#pragma once
// What the Gloo library entries share (gloo_library.cpp: "library", the calls PyTorch 1.13's
// ProcessGroupGloo makes; gloo_variants.cpp: "library:ALGO", Gloo's other algorithms): the
// transport check, the bound call's context, Gloo's exceptions as collbench's errors, the element
// types and reduce functions, and RedOp::avg for the entries bound to one of Gloo's algorithm
// classes.
#include <gloo/algorithm.h>
#include <gloo/math.h>
#include <gloo/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "collectives/backends/gloo/gloo_transport.hpp"
#include "collectives/avg.hpp"
#include "collectives/registry.hpp"

namespace gloo {
class Context;
}

namespace collbench::gloo_library {

// `t` as the Gloo transport (host memory); NotSupported on any other.
GlooTransport& gloo(Transport& t);

// What every bound call holds: the transport (for errors and tags), its scope (the watchdog's
// view), the library context the call runs on (GlooTransport::library_context: 0 for the
// options API, 1 for the algorithm classes) and the timeout given to each options object.
struct Bound {
  GlooTransport* t = nullptr;
  CallScope* scope = nullptr;
  std::shared_ptr<gloo::Context> ctx;
  std::chrono::milliseconds timeout{0};
  int rank = 0;
  int size = 1;
};
// Collective on the first call for each context (it connects it): bind on every rank alike.
Bound bound(Transport& t, int which_context);

// Rethrows the exception being handled: Gloo's (gloo::IoException, gloo::Exception,
// gloo::EnforceNotMet) as TimeoutError / TransportError naming `what` with the transport's
// error_context(); collbench's own unchanged. Call only inside a catch block.
[[noreturn]] void rethrow_as_collbench(const Bound& b, const char* what);

// One blocking Gloo call, published on the scope for the watchdog as the MPI library's are
// (`what`: static text, "in gloo::allreduce (some rank never arrived)"), its errors translated.
template <class F>
void blocking(const Bound& b, const char* what, F&& f) {
  const BlockingCall published(*b.scope, b.t, what);
  try {
    f();
  } catch (...) {
    rethrow_as_collbench(b, what);
  }
}

// Why PyTorch 1.13's ProcessGroupGloo cannot take a tensor of this dtype (its
// GENERATE_ALL_TYPES: float, double, half, int8, uint8, int32, int64), or nullopt.
std::optional<std::string> pytorch_dtype(DType t);

// Calls f(Tag<T>{}) with the element type Gloo is instantiated on for `t` (gloo::float16 for
// float16). bfloat16: Gloo has no such type; `bits16` passes gloo::float16 for it (moves only:
// the bits travel unchanged), otherwise it throws NotSupported.
template <class F>
decltype(auto) visit_gloo_type(DType t, F&& f, bool bits16 = false) {
  switch (t) {
    case DType::int8: return f(Tag<std::int8_t>{});
    case DType::uint8: return f(Tag<std::uint8_t>{});
    case DType::int32: return f(Tag<std::int32_t>{});
    case DType::int64: return f(Tag<std::int64_t>{});
    case DType::float16: return f(Tag<gloo::float16>{});
    case DType::float32: return f(Tag<float>{});
    case DType::float64: return f(Tag<double>{});
    case DType::bfloat16:
      if (bits16) return f(Tag<gloo::float16>{});
      break;
  }
  throw NotSupported("Gloo has no " + std::string(dtype_name(t)) + " element type");
}

// gloo::sum / product / max / min <T> for the op's kind and dtype, as ProcessGroupGloo's
// toFunction<T> picks them. Header templates, so they are compiled into collbench with its
// flags; this Debian build of Gloo has GLOO_USE_AVX 0, so no AVX float16 specialisation is
// declared and float16 goes through gloo::float16's operators (a float conversion per element).
// NotSupported for a planted test kernel (op.host_fn not collbench's own) and avg (run_entry
// applies it around the sum; reaching here is a bug: Error).
using ReduceFunc = void (*)(void*, const void*, const void*, std::size_t);
ReduceFunc reduce_func(const ReduceOp& op);

// The options-API allreduce as ProcessGroupGloo calls it (AsyncAllreduceWork), bound to one
// case; `bcube`: with opts.setAlgorithm(BCUBE) (library:bcube_opts) instead of Gloo's default.
PreparedCall bind_allreduce(Transport& t, const CollArgs& a, bool bcube);

// The class algorithms' reduction (gloo::ReductionFunction<T>::sum ...); avg: the sum, with
// AvgAround applied around it.
template <class T>
const gloo::ReductionFunction<T>* class_reduction(RedOp kind) {
  switch (kind) {
    case RedOp::sum:
    case RedOp::avg: return gloo::ReductionFunction<T>::sum;
    case RedOp::prod: return gloo::ReductionFunction<T>::product;
    case RedOp::max: return gloo::ReductionFunction<T>::max;
    case RedOp::min: return gloo::ReductionFunction<T>::min;
  }
  return nullptr;
}
// The same refusals as reduce_func (a planted test kernel), for a class algorithm's op (avg
// included: it is applied around the class's sum).
void check_class_op(const ReduceOp& op);

// A buffer pointer as Gloo takes it (non-const T*: Gloo's setters and classes do not write inputs).
template <class T>
T* typed(const void* p) {
  return const_cast<T*>(static_cast<const T*>(p));
}

// Elements whose bytes exceed an int: Gloo's algorithm classes keep counts and byte sizes in int.
bool over_int_bytes(std::size_t elems, DType t);

}  // namespace collbench::gloo_library
