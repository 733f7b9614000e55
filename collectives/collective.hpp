#pragma once
// What a collective call is: the op, its buffers and parameters (NCCL/MPI conventions).
//
// The per-op facts (buffer extents, in-place convention, reducing/rooted, ...) are the table
// in op_traits.hpp; the functions below are lookups into it.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "collectives/core/dtype.hpp"
#include "collectives/core/error.hpp"
#include "collectives/core/reduce_op.hpp"
#include "collectives/core/workspace.hpp"
#include "collectives/op_traits.hpp"

namespace collbench {

constexpr std::string_view op_name(Op op) { return op_traits(op).name; }
std::optional<Op> parse_op(std::string_view name);

constexpr bool op_reduces(Op op) { return op_traits(op).reduces; }
constexpr bool op_has_root(Op op) { return op_traits(op).rooted; }
// Element counts of the send/recv buffers a rank needs (full-size on every rank, so the
// harness can allocate uniformly; unused at non-roots where the convention says so).
constexpr std::size_t send_elems(Op op, std::size_t count, int n) { return count * extent_chunks(op_traits(op).send, n); }
constexpr std::size_t recv_elems(Op op, std::size_t count, int n) { return count * extent_chunks(op_traits(op).recv, n); }

struct CollArgs {
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  // elements per rank-chunk (op_traits.hpp)
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
