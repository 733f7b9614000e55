// The MPI library's own collectives as registry entries (algo "library", backend "mpi"),
// so they go through the same timing, verification and JSON path as the custom ones.
#include <dlfcn.h>
#include <mpi.h>

#include <climits>
#include <optional>
#include <typeinfo>

#include "collectives/registry.hpp"
#include "collectives/transport/mpi/mpi_transport.hpp"

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

// Built-in ops for native types. Integer sum/prod in MPI wrap in two's complement like
// ours. 16-bit floats (and a planted test kernel) need a user op.
void make_op(const ReduceOp& r, MpiOp& out) {
  if (r.kind == RedOp::avg) throw Error("avg reached the MPI library: it is applied around it (run_entry)");
  const bool native = r.dtype != DType::float16 && r.dtype != DType::bfloat16;
  if (native && r.host_fn == host_reduce_fn(r.kind, r.dtype)) {
    out.op = builtin_op(r.kind);
    return;
  }
  if (r.host_fn != host_reduce_fn(r.kind, r.dtype))
    throw NotSupported("the MPI library path cannot apply a custom reduce kernel");
  MPI_User_function* fn = r.dtype == DType::float16 ? user_fn<DType::float16>(r.kind) : user_fn<DType::bfloat16>(r.kind);
  MPI_Op_create(fn, /*commute=*/1, &out.op);
  out.user = true;
}

// MpiTransport is final, so an exact type check is the same test as a dynamic_cast at a
// quarter of its cost (~1 ns instead of ~4 ns per call: bench/bench_overhead.cpp).
MpiTransport& mpi(Transport& t) {
  if (typeid(t) != typeid(MpiTransport)) throw NotSupported("MPI library collectives need the mpi backend");
  return static_cast<MpiTransport&>(t);
}

int icount(std::size_t count, const Transport& t) {
  if (count > static_cast<std::size_t>(INT_MAX)) throw NotSupported("count exceeds MPI's int", t.error_context());
  return static_cast<int>(count);
}

const void* in_place_if(bool cond, const void* p) { return cond ? MPI_IN_PLACE : p; }

// Every library collective is one blocking MPI call, published on the call scope for the
// watchdog (a few stores, no clock; harness/run/watchdog.hpp) so a rank stuck in it is named
// after the timeout. Still the plain blocking call: no MPI_I* variant, no polling of ours.
#define COLLBENCH_MPI_LIBRARY_CALL(name, call, t)                                                \
  do {                                                                                          \
    const ::collbench::BlockingCall cb_blocking_((t).scope(), &(t), "in " name " (some rank never arrived)"); \
    COLLBENCH_MPI_CHECK(call, &(t));                                                            \
  } while (0)

void bcast(Transport& t, const CollArgs& a) {
  MpiTransport& m = mpi(t);
  if (m.rank() == a.root) m.memory().copy(a.recv, a.send, a.bytes(a.count));
  COLLBENCH_MPI_LIBRARY_CALL("MPI_Bcast", MPI_Bcast(a.recv, icount(a.count, t), mpi_type(a.dtype), a.root, m.comm()), t);
}

void reduce(Transport& t, const CollArgs& a) {
  MpiTransport& m = mpi(t);
  MpiOp op;
  make_op(a.op, op);
  const bool ip = a.send == a.recv;
  // MPI_IN_PLACE is only valid at the root; elsewhere the send buffer is simply the input.
  const void* s = (ip && m.rank() == a.root) ? MPI_IN_PLACE : a.send;
  COLLBENCH_MPI_LIBRARY_CALL("MPI_Reduce", MPI_Reduce(s, a.recv, icount(a.count, t), mpi_type(a.dtype), op.op, a.root, m.comm()), t);
}

void allreduce(Transport& t, const CollArgs& a) {
  MpiTransport& m = mpi(t);
  MpiOp op;
  make_op(a.op, op);
  COLLBENCH_MPI_LIBRARY_CALL("MPI_Allreduce", MPI_Allreduce(in_place_if(a.send == a.recv, a.send), a.recv, icount(a.count, t),
                                    mpi_type(a.dtype), op.op, m.comm()),
                      t);
}

void gather(Transport& t, const CollArgs& a) {
  MpiTransport& m = mpi(t);
  const bool ip = m.rank() == a.root && a.send == elem_ptr(a.recv, m.rank() * a.count, a.dtype);
  const int c = icount(a.count, t);
  COLLBENCH_MPI_LIBRARY_CALL("MPI_Gather", MPI_Gather(in_place_if(ip, a.send), c, mpi_type(a.dtype), a.recv, c, mpi_type(a.dtype), a.root,
                                 m.comm()),
                      t);
}

void allgather(Transport& t, const CollArgs& a) {
  MpiTransport& m = mpi(t);
  const bool ip = a.send == elem_ptr(a.recv, m.rank() * a.count, a.dtype);
  const int c = icount(a.count, t);
  COLLBENCH_MPI_LIBRARY_CALL("MPI_Allgather", MPI_Allgather(in_place_if(ip, a.send), c, mpi_type(a.dtype), a.recv, c, mpi_type(a.dtype), m.comm()), t);
}

void scatter(Transport& t, const CollArgs& a) {
  MpiTransport& m = mpi(t);
  const bool ip = m.rank() == a.root && a.recv == elem_ptr(a.send, m.rank() * a.count, a.dtype);
  const int c = icount(a.count, t);
  COLLBENCH_MPI_LIBRARY_CALL("MPI_Scatter", MPI_Scatter(a.send, c, mpi_type(a.dtype), ip ? MPI_IN_PLACE : a.recv, c, mpi_type(a.dtype),
                                  a.root, m.comm()),
                      t);
}

void reduce_scatter(Transport& t, const CollArgs& a) {
  MpiTransport& m = mpi(t);
  MpiOp op;
  make_op(a.op, op);
  const bool ip = a.recv == elem_ptr(a.send, m.rank() * a.count, a.dtype);
  if (ip) {
    // MPI's in-place form reduces in the whole send buffer and leaves the result at its start;
    // NCCL's (ours) leaves it at offset rank*count: move it there afterwards.
    COLLBENCH_MPI_LIBRARY_CALL("MPI_Reduce_scatter_block", MPI_Reduce_scatter_block(MPI_IN_PLACE, const_cast<void*>(a.send), icount(a.count, t),
                                                 mpi_type(a.dtype), op.op, m.comm()),
                        t);
    // Disjoint for rank >= 1 (result at [0, count), destination at [rank*count, ...)).
    if (m.rank() != 0) m.memory().copy(a.recv, a.send, a.bytes(a.count));
    return;
  }
  COLLBENCH_MPI_LIBRARY_CALL("MPI_Reduce_scatter_block", MPI_Reduce_scatter_block(a.send, a.recv, icount(a.count, t), mpi_type(a.dtype), op.op, m.comm()), t);
}

void alltoall(Transport& t, const CollArgs& a) {
  MpiTransport& m = mpi(t);
  const int c = icount(a.count, t);
  COLLBENCH_MPI_LIBRARY_CALL("MPI_Alltoall", MPI_Alltoall(in_place_if(a.send == a.recv, a.send), c, mpi_type(a.dtype), a.recv, c,
                                   mpi_type(a.dtype), m.comm()),
                      t);
}

constexpr const char* kAny = "any world size, any root, any count below 2^31 elements";

COLLBENCH_REGISTER({Op::broadcast, "library", "mpi", "MPI_Bcast", kAny, &bcast});
COLLBENCH_REGISTER({Op::reduce, "library", "mpi", "MPI_Reduce", kAny, &reduce});
COLLBENCH_REGISTER({Op::allreduce, "library", "mpi", "MPI_Allreduce", kAny, &allreduce});
COLLBENCH_REGISTER({Op::gather, "library", "mpi", "MPI_Gather", kAny, &gather});
COLLBENCH_REGISTER({Op::allgather, "library", "mpi", "MPI_Allgather", kAny, &allgather});
COLLBENCH_REGISTER({Op::scatter, "library", "mpi", "MPI_Scatter", kAny, &scatter});
COLLBENCH_REGISTER({Op::reduce_scatter, "library", "mpi", "MPI_Reduce_scatter_block", kAny, &reduce_scatter});
COLLBENCH_REGISTER({Op::alltoall, "library", "mpi", "MPI_Alltoall", kAny, &alltoall});

// ---- Open MPI's hierarchical component, coll/han, as a library variant ("han") -------------
// Open MPI 4.1 ships coll/han at priority 0, below coll/tuned, so MPI_Allreduce never uses it
// unless the whole job says --mca coll_han_priority 100. A communicator picks its components
// when it is made, so "han" runs the same MPI calls on a communicator of its own, made once
// (in the warm-up) with han's priority raised for that moment only: han and the default
// component can then alternate in one interleaved run, the fair baseline for the node-aware
// algorithms. coll_han_priority is read-only to MPI_T, so it is raised through Open MPI's MCA
// variable store (libopen-pal), found with dlsym so nothing links against Open MPI internals:
// mca_base_var_get_value hands out the variable's own storage (an int for an int variable).
class ScopedHanPriority {
 public:
  ScopedHanPriority(int priority, const Transport& t) {
    using Find = int (*)(const char*, const char*, const char*, const char*);
    using Get = int (*)(int, const void*, void*, const char**);
    auto find = reinterpret_cast<Find>(dlsym(RTLD_DEFAULT, "mca_base_var_find"));
    auto get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "mca_base_var_get_value"));
    if (find == nullptr || get == nullptr)
      throw NotSupported("han is Open MPI's coll/han component: this MPI has no MCA variable store", t.error_context());
    const int index = find("ompi", "coll", "han", "priority");
    const void* value = nullptr;
    if (index < 0 || get(index, &value, nullptr, nullptr) != 0 || value == nullptr)
      throw NotSupported("this Open MPI has no coll/han component (or it was excluded with --mca coll)", t.error_context());
    storage_ = static_cast<int*>(const_cast<void*>(value));
    saved_ = *storage_;
    *storage_ = priority;
  }
  ~ScopedHanPriority() { *storage_ = saved_; }
  ScopedHanPriority(const ScopedHanPriority&) = delete;
  ScopedHanPriority& operator=(const ScopedHanPriority&) = delete;

 private:
  int* storage_ = nullptr;
  int saved_ = 0;
};

// The communicator han serves: every rank of `t`, made on the first call.
Transport& han_transport(Transport& t) {
  constexpr std::string_view kName = "library/han";
  mpi(t);
  // han splits by node itself and declines (falls back to tuned) within one node.
  if (t.node_layout().nodes() < 2)
    throw NotSupported("han is a hierarchical component: Open MPI uses it only across nodes", t.error_context());
  std::optional<ScopedHanPriority> raised;  // only while the communicator is made
  if (!t.has_split(kName)) raised.emplace(100, t);
  return *t.split(kName, 0, t.rank());
}

template <void (*Call)(Transport&, const CollArgs&)>
void on_han(Transport& t, const CollArgs& a) {
  Transport& h = han_transport(t);
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
  // 4.1's han offsets MPI_IN_PLACE as if it were a buffer in its reduce tasks: past one
  // segment the process dies at address 0x10001 (measured: a 2x2 allreduce of 30 MiB; fixed
  // in 5.0, open-mpi/ompi#11488 and #11800).
  if ((Call == &allreduce || Call == &reduce) && a.send == a.recv)
    throw NotSupported("Open MPI 4.1's coll/han crashes on MPI_IN_PLACE reduce/allreduce (fixed in 5.0): in place refused",
                       t.error_context());
#endif
  Call(h, a);
}

constexpr const char* kHan = "Open MPI only, at least 2 nodes; any root, any count below 2^31 elements";
COLLBENCH_REGISTER({Op::broadcast, "han", "mpi", "MPI_Bcast served by Open MPI's coll/han (node-aware)", kHan, &on_han<bcast>});
COLLBENCH_REGISTER({Op::reduce, "han", "mpi", "MPI_Reduce served by Open MPI's coll/han (node-aware)", kHan, &on_han<reduce>});
COLLBENCH_REGISTER({Op::allreduce, "han", "mpi", "MPI_Allreduce served by Open MPI's coll/han (node-aware)", kHan, &on_han<allreduce>});
COLLBENCH_REGISTER({Op::allgather, "han", "mpi", "MPI_Allgather served by Open MPI's coll/han (node-aware)", kHan, &on_han<allgather>});

}  // namespace
}  // namespace collbench
