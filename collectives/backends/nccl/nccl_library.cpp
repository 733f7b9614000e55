// NCCL's own collectives as registry entries (algo "library", backend "nccl"), so they go
// through the same timing, verification and JSON path as the custom algorithms. Buffer
// conventions (collective.hpp) are NCCL's, in-place forms included. Each call enqueues on
// the transport's stream and returns; the harness drains the stream once per sample
// (memory().synchronize(), under the transport's timeout), so --batch amortises launches as
// nccl-tests does.
#include <nccl.h>

#include <cstdlib>
#include <vector>

#include "collectives/registry.hpp"
#include "collectives/backends/nccl/nccl_transport.hpp"

// ncclAlltoAll/ncclGather/ncclScatter exist from NCCL 2.28; before, these three are grouped
// ncclSend/ncclRecv as nccl-tests builds them.
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#define CB_NCCL_HAS_ALLTOALL 1
#else
#define CB_NCCL_HAS_ALLTOALL 0
#endif

namespace collbench {
namespace {

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::int8: return ncclInt8;
    case DType::uint8: return ncclUint8;
    case DType::int32: return ncclInt32;
    case DType::int64: return ncclInt64;
    case DType::float16: return ncclFloat16;
    case DType::bfloat16: return ncclBfloat16;
    case DType::float32: return ncclFloat32;
    case DType::float64: return ncclFloat64;
  }
  return ncclInt8;
}

ncclRedOp_t nccl_op(const ReduceOp& r) {
  if (r.host_fn && r.host_fn != host_reduce_fn(r.kind, r.dtype))
    throw NotSupported("the NCCL library path cannot apply a custom reduce kernel");
  switch (r.kind) {
    case RedOp::sum: return ncclSum;
    case RedOp::prod: return ncclProd;
    case RedOp::max: return ncclMax;
    case RedOp::min: return ncclMin;
    case RedOp::avg: return ncclAvg;  // native (NCCL >= 2.10): the entries say native_avg
  }
  return ncclSum;
}

NcclTransport& nccl(Transport& t) {
  auto* n = dynamic_cast<NcclTransport*>(&t);
  if (!n) throw NotSupported("NCCL library collectives need the nccl backend");
  return *n;
}

void bcast(Transport& t, const CollArgs& a) {
  NcclTransport& n = nccl(t);
  COLLBENCH_NCCL_CHECK(ncclBroadcast(a.send, a.recv, a.count, nccl_type(a.dtype), a.root, n.comm(), n.stream()), n);
}

void reduce(Transport& t, const CollArgs& a) {
  NcclTransport& n = nccl(t);
  COLLBENCH_NCCL_CHECK(
      ncclReduce(a.send, a.recv, a.count, nccl_type(a.dtype), nccl_op(a.op), a.root, n.comm(), n.stream()), n);
}

void allreduce(Transport& t, const CollArgs& a) {
  NcclTransport& n = nccl(t);
  COLLBENCH_NCCL_CHECK(ncclAllReduce(a.send, a.recv, a.count, nccl_type(a.dtype), nccl_op(a.op), n.comm(), n.stream()),
                       n);
}

void allgather(Transport& t, const CollArgs& a) {
  NcclTransport& n = nccl(t);
  COLLBENCH_NCCL_CHECK(ncclAllGather(a.send, a.recv, a.count, nccl_type(a.dtype), n.comm(), n.stream()), n);
}

void reduce_scatter(Transport& t, const CollArgs& a) {
  NcclTransport& n = nccl(t);
  COLLBENCH_NCCL_CHECK(
      ncclReduceScatter(a.send, a.recv, a.count, nccl_type(a.dtype), nccl_op(a.op), n.comm(), n.stream()), n);
}

// Before NCCL 2.28 (and for comparison): grouped ncclSend/ncclRecv, as nccl-tests builds them.
// Every op of one wait_all forms one NCCL group (see grouped_transport.hpp).
[[maybe_unused]] void alltoall_p2p(Transport& t, const CollArgs& a) {
  NcclTransport& n = nccl(t);
  const int size = n.size(), me = n.rank();
  const std::size_t chunk = a.bytes(a.count);
  const void* send = a.send;
  if (a.send == a.recv && chunk) {
    void* copy = a.scratch(chunk * size);
    t.memory().copy(copy, a.send, chunk * size);
    send = copy;
  }
  t.memory().copy(elem_ptr(a.recv, me * a.count, a.dtype), elem_ptr(send, me * a.count, a.dtype), chunk);
  std::vector<Request> rs;
  rs.reserve(2 * size);
  for (int p = 0; p < size; ++p) {
    if (p == me) continue;
    rs.push_back(t.irecv(elem_ptr(a.recv, p * a.count, a.dtype), chunk, p, 0));
    rs.push_back(t.isend(elem_ptr(send, p * a.count, a.dtype), chunk, p, 0));
  }
  t.wait_all(rs);
}

[[maybe_unused]] void gather_p2p(Transport& t, const CollArgs& a) {
  NcclTransport& n = nccl(t);
  const int size = n.size(), me = n.rank();
  const std::size_t chunk = a.bytes(a.count);
  if (me != a.root) {
    t.send(a.send, chunk, a.root, 0);
    return;
  }
  t.memory().copy(elem_ptr(a.recv, me * a.count, a.dtype), a.send, chunk);
  std::vector<Request> rs;
  for (int p = 0; p < size; ++p)
    if (p != me) rs.push_back(t.irecv(elem_ptr(a.recv, p * a.count, a.dtype), chunk, p, 0));
  t.wait_all(rs);
}

[[maybe_unused]] void scatter_p2p(Transport& t, const CollArgs& a) {
  NcclTransport& n = nccl(t);
  const int size = n.size(), me = n.rank();
  const std::size_t chunk = a.bytes(a.count);
  if (me != a.root) {
    t.recv(a.recv, chunk, a.root, 0);
    return;
  }
  t.memory().copy(a.recv, elem_ptr(a.send, me * a.count, a.dtype), chunk);
  std::vector<Request> rs;
  for (int p = 0; p < size; ++p)
    if (p != me) rs.push_back(t.isend(elem_ptr(a.send, p * a.count, a.dtype), chunk, p, 0));
  t.wait_all(rs);
}
#if CB_NCCL_HAS_ALLTOALL
void alltoall_native(Transport& t, const CollArgs& a) {
  NcclTransport& n = nccl(t);
  const void* send = a.send;
  if (a.send == a.recv && a.count) {
    // In place is not documented for ncclAlltoAll: send from a copy (outside NCCL's time,
    // inside ours — the in-place point measures copy + alltoall).
    void* copy = a.scratch(a.bytes(a.count * n.size()));
    t.memory().copy(copy, a.send, a.bytes(a.count * n.size()));
    send = copy;
  }
  COLLBENCH_NCCL_CHECK(ncclAlltoAll(send, a.recv, a.count, nccl_type(a.dtype), n.comm(), n.stream()), n);
}

void gather_native(Transport& t, const CollArgs& a) {  // in place: send == recv + root*count, NCCL's form
  NcclTransport& n = nccl(t);
  COLLBENCH_NCCL_CHECK(ncclGather(a.send, a.recv, a.count, nccl_type(a.dtype), a.root, n.comm(), n.stream()), n);
}

void scatter_native(Transport& t, const CollArgs& a) {  // in place: recv == send + root*count, NCCL's form
  NcclTransport& n = nccl(t);
  COLLBENCH_NCCL_CHECK(ncclScatter(a.send, a.recv, a.count, nccl_type(a.dtype), a.root, n.comm(), n.stream()), n);
}
constexpr CollFn kAlltoall = &alltoall_native, kGather = &gather_native, kScatter = &scatter_native;
constexpr const char* kAlltoallDesc = "ncclAlltoAll";
constexpr const char* kGatherDesc = "ncclGather";
constexpr const char* kScatterDesc = "ncclScatter";
#else
constexpr CollFn kAlltoall = &alltoall_p2p, kGather = &gather_p2p, kScatter = &scatter_p2p;
constexpr const char* kAlltoallDesc = "grouped ncclSend/ncclRecv to every rank (nccl-tests style)";
constexpr const char* kGatherDesc = "grouped ncclRecv at the root (nccl-tests style)";
constexpr const char* kScatterDesc = "grouped ncclSend at the root (nccl-tests style)";
#endif

constexpr const char* kAny = "any world size, any root, any count; device memory on the nccl backend";

// What NCCL was told when the job's communicator was made: NCCL_ALGO/NCCL_PROTO as set in the
// environment ({}: NCCL's own choice per call).
LibraryConfig env_config(const AlgoEntry&, const CollArgs&) {
  LibraryConfig c;
  for (const char* name : {"NCCL_ALGO", "NCCL_PROTO"})
    if (const char* v = std::getenv(name)) c.emplace_back(name, v);
  return c;
}

COLLBENCH_REGISTER({Op::broadcast, "library", "nccl", "ncclBroadcast", kAny, &bcast, nullptr, nullptr, false, &env_config});
COLLBENCH_REGISTER({Op::reduce, "library", "nccl", "ncclReduce", kAny, &reduce, nullptr, nullptr, true, &env_config});
COLLBENCH_REGISTER({Op::allreduce, "library", "nccl", "ncclAllReduce", kAny, &allreduce, nullptr, nullptr, true, &env_config});
COLLBENCH_REGISTER({Op::gather, "library", "nccl", kGatherDesc, kAny, kGather, nullptr, nullptr, false, &env_config});
COLLBENCH_REGISTER({Op::allgather, "library", "nccl", "ncclAllGather", kAny, &allgather, nullptr, nullptr, false, &env_config});
COLLBENCH_REGISTER({Op::scatter, "library", "nccl", kScatterDesc, kAny, kScatter, nullptr, nullptr, false, &env_config});
COLLBENCH_REGISTER({Op::reduce_scatter, "library", "nccl", "ncclReduceScatter", kAny, &reduce_scatter, nullptr, nullptr, true, &env_config});
COLLBENCH_REGISTER({Op::alltoall, "library", "nccl", kAlltoallDesc, kAny, kAlltoall, nullptr, nullptr, false, &env_config});

}  // namespace
}  // namespace collbench
