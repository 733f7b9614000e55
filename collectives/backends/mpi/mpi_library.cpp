// The MPI library's own collectives as registry entries (algo "library", backend "mpi"),
// so they go through the same timing, verification and JSON path as the custom ones.
#include <mpi.h>

#include <cctype>
#include <climits>
#include <memory>
#include <optional>
#include <typeinfo>

#include "collectives/backends/mpi/mpi_library.hpp"
#include "collectives/backends/mpi/mpi_mpich.hpp"
#include "collectives/backends/mpi/mpi_ompi_vars.hpp"

namespace collbench {
namespace {

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::int8: return MPI_INT8_T;
    case DType::uint8: return MPI_UINT8_T;
    case DType::int32: return MPI_INT32_T;
    case DType::int64: return MPI_INT64_T;
    case DType::float32: return MPI_FLOAT;
    case DType::float64: return MPI_DOUBLE;
    case DType::float16:
    case DType::bfloat16: return MPI_UINT16_T;  // moved as raw bits; reductions use a user op
  }
  return MPI_BYTE;
}

// User-defined MPI op applying our kernel: the only way to reduce float16/bfloat16 in MPI,
// and exact same arithmetic as the custom algorithms for them.
template <RedOp Op, DType T>
void user_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
  host_reduce_fn(Op, T)(inout, inout, in, static_cast<std::size_t>(*len));
}

struct MpiOp {
  MPI_Op op = MPI_OP_NULL;
  bool user = false;
  MpiOp() = default;
  MpiOp(const MpiOp&) = delete;
  MpiOp& operator=(const MpiOp&) = delete;
  ~MpiOp() {
    if (user) MPI_Op_free(&op);
  }
};

MPI_Op builtin_op(RedOp op) {
  switch (op) {
    case RedOp::sum: return MPI_SUM;
    case RedOp::prod: return MPI_PROD;
    case RedOp::max: return MPI_MAX;
    case RedOp::min: return MPI_MIN;
    case RedOp::avg: break;  // MPI has no avg: run_entry scales and sums, so none arrives here
  }
  return MPI_SUM;
}

template <DType T>
MPI_User_function* user_fn(RedOp op) {
  switch (op) {
    case RedOp::sum: return &user_reduce<RedOp::sum, T>;
    case RedOp::prod: return &user_reduce<RedOp::prod, T>;
    case RedOp::max: return &user_reduce<RedOp::max, T>;
    case RedOp::min: return &user_reduce<RedOp::min, T>;
    case RedOp::avg: break;
  }
  return nullptr;
}

// 16-bit floats need a user op (a planted test kernel is refused): made once per bound call.
[[gnu::noinline]] void make_user_op(const ReduceOp& r, MpiOp& out) {
  if (r.kind == RedOp::avg) throw Error("avg reached the MPI library: it is applied around it (run_entry)");
  if (r.host_fn != host_reduce_fn(r.kind, r.dtype))
    throw NotSupported("the MPI library path cannot apply a custom reduce kernel");
  MPI_User_function* fn = r.dtype == DType::float16 ? user_fn<DType::float16>(r.kind) : user_fn<DType::bfloat16>(r.kind);
  MPI_Op_create(fn, /*commute=*/1, &out.op);
  out.user = true;
}

}  // namespace

namespace mpi_library {

void not_mpi(Transport& t) {
  if (t.memory().kind() == MemoryKind::cuda)  // --backend mpi --device cuda: a device transport over MPI
    throw NotSupported("MPI library collectives run on host memory only (--device cpu); on device memory "
                       "collbench's own algorithms stage through host memory");
  throw NotSupported("MPI library collectives need the mpi backend");
}

namespace {

int icount(std::size_t count, const Transport& t) {
  if (count > static_cast<std::size_t>(INT_MAX)) throw NotSupported("count exceeds MPI's int", t.error_context());
  return static_cast<int>(count);
}

const void* in_place_if(bool cond, const void* p) { return cond ? MPI_IN_PLACE : p; }

}  // namespace

// Every library collective is one blocking MPI call, published on the call scope for the
// watchdog (a few stores, no clock; harness/runtime/watchdog.hpp) so a rank stuck in it is named
// after the timeout. Still the plain blocking call: no MPI_I* variant, no polling of ours.
#define COLLBENCH_MPI_LIBRARY_CALL(name, call, bound)                                                          \
  do {                                                                                                            \
    const ::collbench::BlockingCall cb_blocking_(*(bound).scope, (bound).t, "in " name " (some rank never arrived)"); \
    COLLBENCH_MPI_CHECK(call, (bound).t);                                                                        \
  } while (0)

namespace {

// What every bound call holds: the transport (for errors), its scope and communicator.
struct Bound {
  Transport* t;
  CallScope* scope;
  MPI_Comm comm;
  int rank;
};
Bound bound(Transport& t) {
  MpiTransport& m = mpi(t);
  return {&t, &m.scope(), m.comm(), m.rank()};
}

// The op for a bound call's lifetime: built-in (nothing to free), or a user op (float16,
// bfloat16) made once per bound call and freed with its last copy.
struct BoundOp {
  MPI_Op op = MPI_OP_NULL;
  std::shared_ptr<MpiOp> user;
};
BoundOp bound_op(const ReduceOp& r) {
  // Native types with the standard kernel: MPI's built-in op. Integer sum/prod in MPI wrap in
  // two's complement like ours.
  if (r.kind != RedOp::avg && r.dtype != DType::float16 && r.dtype != DType::bfloat16 &&
      r.host_fn == host_reduce_fn(r.kind, r.dtype)) [[likely]]
    return {builtin_op(r.kind), nullptr};
  auto op = std::make_shared<MpiOp>();
  make_user_op(r, *op);
  return {op->op, std::move(op)};
}

// Each op's call, bound once: `run` binds and calls (the tests' verifier, coll/han, avg-wrapped
// calls), `prepare` binds once per case for the harness, which then only calls (PreparedCall).
auto bind_bcast(Transport& t, const CollArgs& a) {
  const Bound b = bound(t);
  return [b, root = b.rank == a.root, m = &t.memory(), s = a.send, r = a.recv, bytes = a.bytes(a.count),
          c = icount(a.count, t), type = mpi_type(a.dtype), root_rank = a.root] {
    if (root) m->copy(r, s, bytes);
    COLLBENCH_MPI_LIBRARY_CALL("MPI_Bcast", MPI_Bcast(r, c, type, root_rank, b.comm), b);
  };
}

auto bind_reduce(Transport& t, const CollArgs& a) {
  const Bound b = bound(t);
  // MPI_IN_PLACE is only valid at the root; elsewhere the send buffer is simply the input.
  const bool in_place = a.send == a.recv && b.rank == a.root;
  MemorySpace* m = &t.memory();
  std::shared_ptr<void> aside;  // the root's input copied aside, instead of MPI_IN_PLACE
#if defined(MPICH_NUMVERSION)
  // MPICH 4.0.2-4.1.1's ch4 reduce reads MPI_IN_PLACE as a buffer when the root is not rank 0
  // and crashes (pmodels/mpich#6540; 4.0.2: from 2 KiB at 2 ranks). Its fixes (#6543, and #6916
  // for more compositions) copy the root's input aside; so does this, for every MPICH (which
  // releases carry both fixes is unverified). Only the root knows the call is in place: no refusal.
  if (in_place && a.root != 0 && a.count) aside.reset(m->allocate(a.bytes(a.count)), [m](void* p) { m->deallocate(p); });
#endif
  const void* s = aside ? aside.get() : in_place ? MPI_IN_PLACE : a.send;
  return [b, op = bound_op(a.op), s, aside, m, r = a.recv, bytes = a.bytes(a.count), c = icount(a.count, t),
          type = mpi_type(a.dtype), root = a.root] {
    if (aside) m->copy(aside.get(), r, bytes);
    COLLBENCH_MPI_LIBRARY_CALL("MPI_Reduce", MPI_Reduce(s, r, c, type, op.op, root, b.comm), b);
  };
}

auto bind_allreduce(Transport& t, const CollArgs& a) {
  const Bound b = bound(t);
  return [b, op = bound_op(a.op), s = in_place_if(a.send == a.recv, a.send), r = a.recv, c = icount(a.count, t),
          type = mpi_type(a.dtype)] {
    COLLBENCH_MPI_LIBRARY_CALL("MPI_Allreduce", MPI_Allreduce(s, r, c, type, op.op, b.comm), b);
  };
}

auto bind_gather(Transport& t, const CollArgs& a) {
  const Bound b = bound(t);
  const bool ip = b.rank == a.root && a.send == elem_ptr(a.recv, b.rank * a.count, a.dtype);
  return [b, s = in_place_if(ip, a.send), r = a.recv, c = icount(a.count, t), type = mpi_type(a.dtype), root = a.root] {
    COLLBENCH_MPI_LIBRARY_CALL("MPI_Gather", MPI_Gather(s, c, type, r, c, type, root, b.comm), b);
  };
}

auto bind_allgather(Transport& t, const CollArgs& a) {
  const Bound b = bound(t);
  const bool ip = a.send == elem_ptr(a.recv, b.rank * a.count, a.dtype);
  return [b, s = in_place_if(ip, a.send), r = a.recv, c = icount(a.count, t), type = mpi_type(a.dtype)] {
    COLLBENCH_MPI_LIBRARY_CALL("MPI_Allgather", MPI_Allgather(s, c, type, r, c, type, b.comm), b);
  };
}

auto bind_scatter(Transport& t, const CollArgs& a) {
  const Bound b = bound(t);
  const bool ip = b.rank == a.root && a.recv == elem_ptr(a.send, b.rank * a.count, a.dtype);
  return [b, s = a.send, r = ip ? MPI_IN_PLACE : a.recv, c = icount(a.count, t), type = mpi_type(a.dtype),
          root = a.root] {
    COLLBENCH_MPI_LIBRARY_CALL("MPI_Scatter", MPI_Scatter(s, c, type, r, c, type, root, b.comm), b);
  };
}

auto bind_reduce_scatter(Transport& t, const CollArgs& a) {
  const Bound b = bound(t);
  // MPI's in-place form reduces in the whole send buffer and leaves the result at its start;
  // NCCL's (ours) leaves it at offset rank*count: moved there afterwards (disjoint for rank >= 1).
  const bool ip = a.recv == elem_ptr(a.send, b.rank * a.count, a.dtype);
  return [b, op = bound_op(a.op), ip, m = &t.memory(), s = const_cast<void*>(a.send), r = a.recv,
          bytes = a.bytes(a.count), c = icount(a.count, t), type = mpi_type(a.dtype)] {
    if (!ip) {
      COLLBENCH_MPI_LIBRARY_CALL("MPI_Reduce_scatter_block", MPI_Reduce_scatter_block(s, r, c, type, op.op, b.comm), b);
      return;
    }
    COLLBENCH_MPI_LIBRARY_CALL("MPI_Reduce_scatter_block",
                               MPI_Reduce_scatter_block(MPI_IN_PLACE, s, c, type, op.op, b.comm), b);
    if (b.rank != 0) m->copy(r, s, bytes);
  };
}

auto bind_alltoall(Transport& t, const CollArgs& a) {
  const Bound b = bound(t);
  return [b, s = in_place_if(a.send == a.recv, a.send), r = a.recv, c = icount(a.count, t), type = mpi_type(a.dtype)] {
    COLLBENCH_MPI_LIBRARY_CALL("MPI_Alltoall", MPI_Alltoall(s, c, type, r, c, type, b.comm), b);
  };
}

}  // namespace

void bcast(Transport& t, const CollArgs& a) { bind_bcast(t, a)(); }
void reduce(Transport& t, const CollArgs& a) { bind_reduce(t, a)(); }
void allreduce(Transport& t, const CollArgs& a) { bind_allreduce(t, a)(); }
void gather(Transport& t, const CollArgs& a) { bind_gather(t, a)(); }
void allgather(Transport& t, const CollArgs& a) { bind_allgather(t, a)(); }
void scatter(Transport& t, const CollArgs& a) { bind_scatter(t, a)(); }
void reduce_scatter(Transport& t, const CollArgs& a) { bind_reduce_scatter(t, a)(); }
void alltoall(Transport& t, const CollArgs& a) { bind_alltoall(t, a)(); }

PreparedCall bind(Op op, Transport& t, const CollArgs& a) {
  switch (op) {
    case Op::broadcast: return bind_bcast(t, a);
    case Op::reduce: return bind_reduce(t, a);
    case Op::allreduce: return bind_allreduce(t, a);
    case Op::gather: return bind_gather(t, a);
    case Op::allgather: return bind_allgather(t, a);
    case Op::scatter: return bind_scatter(t, a);
    case Op::reduce_scatter: return bind_reduce_scatter(t, a);
    case Op::alltoall: return bind_alltoall(t, a);
  }
  throw NotSupported("no MPI call for this op", t.error_context());
}

std::string_view call_name(Op op) {
  switch (op) {
    case Op::broadcast: return "MPI_Bcast";
    case Op::reduce: return "MPI_Reduce";
    case Op::allreduce: return "MPI_Allreduce";
    case Op::gather: return "MPI_Gather";
    case Op::allgather: return "MPI_Allgather";
    case Op::scatter: return "MPI_Scatter";
    case Op::reduce_scatter: return "MPI_Reduce_scatter_block";
    case Op::alltoall: return "MPI_Alltoall";
  }
  return "";
}

std::string_view tuned_name(Op op) {
  switch (op) {
    case Op::broadcast: return "bcast";
    case Op::reduce: return "reduce";
    case Op::allreduce: return "allreduce";
    case Op::gather: return "gather";
    case Op::allgather: return "allgather";
    case Op::scatter: return "scatter";
    case Op::reduce_scatter: return "reduce_scatter_block";
    case Op::alltoall: return "alltoall";
  }
  return "";
}

// What chose the algorithm, read through MPI_T as it stands: Open MPI's coll/tuned switch and
// forced algorithm; MPICH's MPIR-layer algorithm and whether the device's own selection (ch4,
// POSIX release_gather) comes first (MPIR_CVAR_DEVICE_COLLECTIVES).
LibraryConfig default_config(const AlgoEntry& e, const CollArgs&) {
#if defined(MPICH_VERSION)
  return mpich_default_config(e.op);
#else
  LibraryConfig c;
  for (const std::string& name :
       {std::string("coll_tuned_use_dynamic_rules"), "coll_tuned_" + std::string(tuned_name(e.op)) + "_algorithm"})
    if (auto v = ompi::cvar_text(name)) c.emplace_back(name, *v);
  return c;
#endif
}

namespace {

constexpr const char* kAny = "any world size, any root, any count below 2^31 elements";

template <auto Bind>
PreparedCall prepare(Transport& t, const CollArgs& a) {
  return Bind(t, a);
}

COLLBENCH_REGISTER({Op::broadcast, "library", "mpi", "MPI_Bcast", kAny, &bcast, nullptr, nullptr, false, &default_config, false, &prepare<bind_bcast>});
COLLBENCH_REGISTER({Op::reduce, "library", "mpi", "MPI_Reduce", kAny, &reduce, nullptr, nullptr, false, &default_config, false, &prepare<bind_reduce>});
COLLBENCH_REGISTER({Op::allreduce, "library", "mpi", "MPI_Allreduce", kAny, &allreduce, nullptr, nullptr, false, &default_config, false, &prepare<bind_allreduce>});
COLLBENCH_REGISTER({Op::gather, "library", "mpi", "MPI_Gather", kAny, &gather, nullptr, nullptr, false, &default_config, false, &prepare<bind_gather>});
COLLBENCH_REGISTER({Op::allgather, "library", "mpi", "MPI_Allgather", kAny, &allgather, nullptr, nullptr, false, &default_config, false, &prepare<bind_allgather>});
COLLBENCH_REGISTER({Op::scatter, "library", "mpi", "MPI_Scatter", kAny, &scatter, nullptr, nullptr, false, &default_config, false, &prepare<bind_scatter>});
COLLBENCH_REGISTER({Op::reduce_scatter, "library", "mpi", "MPI_Reduce_scatter_block", kAny, &reduce_scatter, nullptr, nullptr, false, &default_config, false, &prepare<bind_reduce_scatter>});
COLLBENCH_REGISTER({Op::alltoall, "library", "mpi", "MPI_Alltoall", kAny, &alltoall, nullptr, nullptr, false, &default_config, false, &prepare<bind_alltoall>});

}  // namespace
}  // namespace mpi_library
}  // namespace collbench
