#pragma once
// What a collective call is: the op, its buffers and parameters (NCCL/MPI conventions).
//
// Buffer conventions, n = world size, `count` = elements per rank-chunk:
//   broadcast       recv[count] on every rank; root sends from send[count]
//   reduce          send[count] -> recv[count] at root (recv unused elsewhere)
//   allreduce       send[count] -> recv[count]
//   gather          send[count] -> recv[n*count] at root
//   allgather       send[count] -> recv[n*count]
//   scatter         send[n*count] at root -> recv[count]
//   reduce_scatter  send[n*count] -> recv[count]   (rank r gets the reduced chunk r)
//   alltoall        send[n*count] -> recv[n*count] (chunk j of rank i lands as chunk i of rank j)
// In place (NCCL style) is expressed by pointers: send == recv for broadcast/reduce/allreduce/
// alltoall; send == recv + rank*count for allgather and gather (at root); recv == send +
// rank*count for reduce_scatter and scatter (at root). Algorithms must handle both forms.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "collectives/core/dtype.hpp"
#include "collectives/core/error.hpp"
#include "collectives/core/reduce_op.hpp"
#include "collectives/core/workspace.hpp"

namespace collbench {

enum class Op { broadcast, reduce, allreduce, gather, allgather, scatter, reduce_scatter, alltoall };

inline constexpr Op kAllOps[] = {Op::broadcast, Op::reduce,  Op::allreduce,      Op::gather,
                                 Op::allgather, Op::scatter, Op::reduce_scatter, Op::alltoall};

constexpr std::string_view op_name(Op op) {
  switch (op) {
    case Op::broadcast: return "broadcast";
    case Op::reduce: return "reduce";
    case Op::allreduce: return "allreduce";
    case Op::gather: return "gather";
    case Op::allgather: return "allgather";
    case Op::scatter: return "scatter";
    case Op::reduce_scatter: return "reduce_scatter";
    case Op::alltoall: return "alltoall";
  }
  return "?";
}
std::optional<Op> parse_op(std::string_view name);

constexpr bool op_reduces(Op op) { return op == Op::reduce || op == Op::allreduce || op == Op::reduce_scatter; }
constexpr bool op_has_root(Op op) {
  return op == Op::broadcast || op == Op::reduce || op == Op::gather || op == Op::scatter;
}
// Element counts of the send/recv buffers a rank needs (full-size on every rank, so the
// harness can allocate uniformly; unused at non-roots where the convention says so).
constexpr std::size_t send_elems(Op op, std::size_t count, int n) {
  return (op == Op::scatter || op == Op::reduce_scatter || op == Op::alltoall) ? count * n : count;
}
constexpr std::size_t recv_elems(Op op, std::size_t count, int n) {
  return (op == Op::gather || op == Op::allgather || op == Op::alltoall) ? count * n : count;
}

struct CollArgs {
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  // elements per rank-chunk, see above
  DType dtype = DType::float32;
  ReduceOp op{};                // reducing ops only
  int root = 0;                 // rooted ops only
  std::size_t segment_bytes = 0;  // pipelining segment for chunked algorithms; 0 = algorithm default
  Workspace* workspace = nullptr;   // the caller's scratch (in the transport's memory space)

  std::size_t elem_size() const { return dtype_size(dtype); }
  std::size_t bytes(std::size_t elems) const { return elems * dtype_size(dtype); }
  // Scratch slot `slot` of the caller's workspace, at least `n` bytes.
  void* scratch(std::size_t n, int slot = 0) const {
    if (!workspace) throw Error("algorithm needs scratch memory but the caller passed no workspace");
    return workspace->get(n, slot);
  }
};

}  // namespace collbench
