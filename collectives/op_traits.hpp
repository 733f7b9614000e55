#pragma once
// Every per-op fact, in one constexpr table: names, reducing/rooted, buffer extents, how the
// nccl-tests size splits into chunks, the busbw factor, which ranks hold a checkable result,
// the in-place pointer convention, and the fields that identify a measured point. The harness
// (sizes, bandwidth, resume), verification and results/schema/collbench-1.json all follow it;
// the schema's "x-collbench-ops" / "x-collbench-point-identity" annotations (what the Python
// tools read) are checked equal to this table by tests/collectives/test_op_traits.cpp.
//
// Buffer conventions (NCCL/MPI), n = world size, `count` = elements per rank-chunk:
//   broadcast       recv[count] on every rank; root sends from send[count]
//   reduce          send[count] -> recv[count] at root (recv unused elsewhere)
//   allreduce       send[count] -> recv[count]
//   gather          send[count] -> recv[n*count] at root
//   allgather       send[count] -> recv[n*count]
//   scatter         send[n*count] at root -> recv[count]
//   reduce_scatter  send[n*count] -> recv[count]   (rank r gets the reduced chunk r)
//   alltoall        send[n*count] -> recv[n*count] (chunk j of rank i lands as chunk i of rank j)
// In place (NCCL style) is expressed by pointers into one buffer (`InPlace` below); algorithms
// must handle both forms.
#include <array>
#include <cstddef>
#include <iterator>
#include <string_view>

namespace collbench {

enum class Op { broadcast, reduce, allreduce, gather, allgather, scatter, reduce_scatter, alltoall };

// A buffer (or the nccl-tests size) in rank-chunks of `count` elements: one, or one per rank.
enum class Extent { one, world };
constexpr std::size_t extent_chunks(Extent e, int n) { return e == Extent::world ? static_cast<std::size_t>(n) : 1; }

// busbw / algbw = mul · (n − sub) / n, from nccl-tests doc/PERFORMANCE.md
// (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md): allreduce 2(n−1)/n;
// allgather, reduce_scatter, alltoall, gather, scatter (n−1)/n; broadcast, reduce and
// point-to-point 1. It makes busbw comparable to the link bandwidth whatever n is.
struct BusBwFactor {
  int mul = 1, sub = 0;
  constexpr double at(int n) const { return mul * static_cast<double>(n - sub) / n; }
};

// Which ranks a fact applies to.
enum class Ranks { all, root };

// How in-place is expressed by pointers (the rank's own chunk lives inside the other buffer).
enum class InPlace {
  same,          // send == recv
  send_in_recv,  // send == recv + rank·count: the rank's input is its chunk of the n-chunk output
  recv_in_send,  // recv == send + rank·count: the rank's output is its chunk of the n-chunk input
};

struct OpTraits {
  Op op;
  std::string_view name;
  bool reduces;         // takes a ReduceOp; records carry a redop
  bool rooted;          // takes a root; records carry a root
  Extent send, recv;    // buffer sizes, full size on every rank so the harness allocates uniformly
  Extent size_chunks;   // chunks the nccl-tests size (the records' `bytes`) is split into
  BusBwFactor busbw;
  Ranks result_on;      // ranks whose recv buffer holds a result the verifier can check
  InPlace in_place;
  Ranks in_place_on;    // ranks that use the in-place pointers (the others keep two buffers)
};

inline constexpr OpTraits kOpTraits[] = {
    // op                name              reduces rooted  send           recv           size_chunks    busbw   result_on    in_place               in_place_on
    {Op::broadcast,      "broadcast",      false,  true,   Extent::one,   Extent::one,   Extent::one,   {1, 0}, Ranks::all,  InPlace::same,         Ranks::all},
    {Op::reduce,         "reduce",         true,   true,   Extent::one,   Extent::one,   Extent::one,   {1, 0}, Ranks::root, InPlace::same,         Ranks::all},
    {Op::allreduce,      "allreduce",      true,   false,  Extent::one,   Extent::one,   Extent::one,   {2, 1}, Ranks::all,  InPlace::same,         Ranks::all},
    {Op::gather,         "gather",         false,  true,   Extent::one,   Extent::world, Extent::world, {1, 1}, Ranks::root, InPlace::send_in_recv, Ranks::root},
    {Op::allgather,      "allgather",      false,  false,  Extent::one,   Extent::world, Extent::world, {1, 1}, Ranks::all,  InPlace::send_in_recv, Ranks::all},
    {Op::scatter,        "scatter",        false,  true,   Extent::world, Extent::one,   Extent::world, {1, 1}, Ranks::all,  InPlace::recv_in_send, Ranks::root},
    {Op::reduce_scatter, "reduce_scatter", true,   false,  Extent::world, Extent::one,   Extent::world, {1, 1}, Ranks::all,  InPlace::recv_in_send, Ranks::all},
    {Op::alltoall,       "alltoall",       false,  false,  Extent::world, Extent::world, Extent::world, {1, 1}, Ranks::all,  InPlace::same,         Ranks::all},
};

// One row per Op, in enum order, so op_traits() is an index.
static_assert(std::size(kOpTraits) == static_cast<std::size_t>(Op::alltoall) + 1, "one row per Op (alltoall is last)");
static_assert([] {
  for (std::size_t i = 0; i < std::size(kOpTraits); ++i)
    if (kOpTraits[i].op != static_cast<Op>(i)) return false;
  return true;
}(), "kOpTraits rows must be in enum order");
// The size splits into as many chunks as the larger buffer has (nccl-tests' convention).
static_assert([] {
  for (const auto& t : kOpTraits)
    if (t.size_chunks != (t.send == Extent::world || t.recv == Extent::world ? Extent::world : Extent::one)) return false;
  return true;
}(), "size_chunks must be the larger buffer's extent");

constexpr const OpTraits& op_traits(Op op) { return kOpTraits[static_cast<std::size_t>(op)]; }

inline constexpr auto kAllOps = [] {
  std::array<Op, std::size(kOpTraits)> ops{};
  for (std::size_t i = 0; i < ops.size(); ++i) ops[i] = kOpTraits[i].op;
  return ops;
}();

// Point-to-point kinds of measurement: pairs of ranks rather than an Op over CollArgs, but the
// same records, so the facts those records need live here too.
struct P2pOpTraits {
  std::string_view name;
  BusBwFactor busbw;  // one link: 1
};
inline constexpr P2pOpTraits kP2pOpTraits[] = {{"pingpong", {1, 0}}};

// The record fields that identify a measured point: what was measured, not how long (iters,
// warmup, timeout vary between runs of one point). --resume keys and the analysis' dedupe /
// compare keys are these fields, in this order; a field a record lacks counts as null
// (collective records have no src/dst; plain-buffer records no buffers), except "cache": a
// record written before --cache existed counts as "hot" (resume.cpp, analysis/load.py).
inline constexpr std::string_view kPointIdentity[] = {
    "op",    "algo",       "backend", "device",         "dtype", "redop", "root", "in_place",
    "bytes", "world_size", "nodes",   "ranks_per_node", "mode",  "src",   "dst",  "buffers", "cache"};

}  // namespace collbench
