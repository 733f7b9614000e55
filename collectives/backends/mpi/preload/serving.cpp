// Serving a call (docs/preload.md): the algorithm the decision chose (decision.hpp), run on the
// application communicator's Context (its private communicator, transport and scratch) with the
// application's buffers, or a copy of them where its datatype is not a plain array of the basic
// type (made by MPI itself: a send to self with the application's type, received as n x basic);
// the library's call (PMPI_) wherever the decision or the algorithm's start says so; and every
// call counted for the summary (summary.hpp) when one was asked for.
// Every MPI call here is PMPI_ or one this library does not define (MPI_Isend, MPI_Comm_dup ...:
// the MPI transport's): a call of an MPI_ collective while serving one would come back here, so
// it is counted (re-entered) and sent to the library, and MPI_Finalize says so on stderr.
#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include "collectives/backends/mpi/mpi_library.hpp"
#include "collectives/backends/mpi/preload/decision.hpp"
#include "collectives/backends/mpi/preload/messages.hpp"
#include "collectives/backends/mpi/preload/preload.hpp"
#include "collectives/backends/mpi/preload/state.hpp"
#include "collectives/registry.hpp"

namespace collbench::preload {
namespace {

constexpr int kStageTag = 0;  // a send to self: no peer's message can match it

// Copies `fcount` x `ftype` at `from` to `tcount` x `ttype` at `to` (equal signatures) through
// MPI itself: a send to self on the private communicator. How a derived datatype's buffer
// becomes n x basic (and back) without reading its type map here.
void restage(Context& ctx, const void* from, int fcount, MPI_Datatype ftype, void* to, int tcount, MPI_Datatype ttype) {
  const int rc = PMPI_Sendrecv(from, fcount, ftype, ctx.rank(), kStageTag, to, tcount, ttype, ctx.rank(), kStageTag,
                               ctx.comm(), MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS)
    throw Error("staging a derived datatype through MPI failed (MPI error " + std::to_string(rc) + ")");
}

// A buffer as the algorithm sees it: the application's, or a staged copy of it as n x basic.
class Side {
 public:
  // `count` x `type` at `buf` (significant), `n` elements of the signature's basic type.
  Side(Context& ctx, const void* buf, int count, MPI_Datatype type, std::size_t n, const Signature& deciding, int slot)
      : ctx_(ctx), buf_(const_cast<void*>(buf)), count_(count), type_(type), n_(n), leaf_(deciding.leaf) {
    // The deciding basic type itself (the common case: no walk), or a handle whose own signature
    // says it is that basic type; anything else is staged.
    direct_ = type == leaf_;
    if (!direct_) {
      const Signature mine = signature(type, count);
      direct_ = mine.direct && mine.leaf == leaf_;
    }
    ptr_ = direct_ ? buf_ : ctx.stage(n * deciding.leaf_bytes, slot);
  }
  // A side this rank does not use (a non-root's receive buffer): scratch of `bytes`.
  Side(Context& ctx, std::size_t bytes, int slot) : ctx_(ctx), ptr_(ctx.stage(bytes, slot)) {}

  std::byte* ptr() const { return static_cast<std::byte*>(ptr_); }
  bool direct() const { return direct_; }
  // The application's data into the stage, and back (nothing when direct).
  void load() const {
    if (!direct_ && buf_) restage(ctx_, buf_, count_, type_, ptr_, static_cast<int>(n_), leaf_);
  }
  void store() const {
    if (!direct_ && buf_) restage(ctx_, ptr_, static_cast<int>(n_), leaf_, buf_, count_, type_);
  }

 private:
  Context& ctx_;
  void* buf_ = nullptr;
  int count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  std::size_t n_ = 0;
  MPI_Datatype leaf_ = MPI_DATATYPE_NULL;
  bool direct_ = true;
  void* ptr_ = nullptr;
};

// Where block `i` of `count` x `type` starts in `buf` (MPI's in-place blocks: i*count*extent).
void* block(void* buf, int i, int count, MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  return static_cast<std::byte*>(buf) + static_cast<MPI_Aint>(i) * count * extent;
}

// Runs the chosen algorithm on the call's buffers (staged where their type asks). NotSupported
// from the algorithm's start (the same on every rank: it depends on the layout and the size)
// returns -1: the caller makes the library's call instead.
int run_chosen(const Call& c, Plan& p) {
  Context& ctx = *p.ctx;
  const int n = p.size, r = p.rank;
  const std::size_t chunk = p.count * dtype_size(p.dtype);  // bytes per rank-chunk
  const std::size_t elems = p.sig.n;                        // basic elements per rank-chunk
  const bool root = r == c.root;
  CollArgs a;
  a.count = p.count;
  a.dtype = p.dtype;
  a.root = c.root;
  a.workspace = &ctx.work();
  if (op_reduces(c.op)) a.op = make_reduce_op(*reduction(c.mpi_op), p.dtype);
  const bool in_place_send = c.sbuf == MPI_IN_PLACE;
  const auto nn = static_cast<std::size_t>(n);
  std::optional<Side> out;       // written back after the algorithm
  bool staged_in_place = false;  // reduce_scatter in place, its input staged
  // This rank's input as the algorithm reads it (stage slot 0), loaded now.
  auto input = [&](const void* buf, int count, MPI_Datatype type, std::size_t basic) {
    Side s(ctx, buf, count, type, basic, p.sig, 0);
    s.load();
    return s;
  };
  // A buffer the algorithm writes (slot 1), stored back into the application's after it.
  auto output = [&](void* buf, int count, MPI_Datatype type, std::size_t basic) {
    out.emplace(ctx, buf, count, type, basic, p.sig, 1);
    return out->ptr();
  };
  switch (c.op) {
    case Op::broadcast:
      if (root)
        a.send = a.recv = input(c.rbuf, c.rcount, c.rtype, elems).ptr();
      else
        a.send = a.recv = output(c.rbuf, c.rcount, c.rtype, elems);
      break;
    case Op::allreduce:
    case Op::reduce:
      if (c.op == Op::reduce && !root) {  // the receive buffer is not significant here
        a.send = input(c.sbuf, c.scount, c.stype, elems).ptr();
        a.recv = Side(ctx, chunk, 1).ptr();
        break;
      }
      a.recv = output(c.rbuf, c.rcount, c.rtype, elems);
      if (in_place_send) out->load();
      a.send = in_place_send ? a.recv : input(c.sbuf, c.scount, c.stype, elems).ptr();
      break;
    case Op::allgather:
    case Op::gather: {
      if (c.op == Op::gather && !root) {
        a.send = input(c.sbuf, c.scount, c.stype, elems).ptr();
        a.recv = Side(ctx, chunk * nn, 1).ptr();
        break;
      }
      std::byte* all = output(c.rbuf, c.rcount * n, c.rtype, elems * nn);
      std::byte* mine = all + static_cast<std::size_t>(r) * chunk;
      // In place, only this rank's block of the receive buffer is input.
      if (in_place_send && !out->direct())
        restage(ctx, block(c.rbuf, r, c.rcount, c.rtype), c.rcount, c.rtype, mine, static_cast<int>(elems), p.sig.leaf);
      a.send = in_place_send ? mine : input(c.sbuf, c.scount, c.stype, elems).ptr();
      a.recv = all;
      break;
    }
    case Op::scatter: {
      if (!root) {
        a.send = Side(ctx, chunk * nn, 0).ptr();
        a.recv = output(c.rbuf, c.rcount, c.rtype, elems);
        break;
      }
      std::byte* all = input(c.sbuf, c.scount * n, c.stype, elems * nn).ptr();
      a.send = all;
      // In place, the root's block stays where it is in the send buffer.
      a.recv =
          c.rbuf == MPI_IN_PLACE ? all + static_cast<std::size_t>(r) * chunk : output(c.rbuf, c.rcount, c.rtype, elems);
      break;
    }
    case Op::reduce_scatter: {
      // MPI's in-place form: the input is the whole receive buffer, the result lands at its
      // start; collbench's (NCCL's): the result at this rank's block of the input.
      const Side s = input(in_place_send ? c.rbuf : c.sbuf, c.rcount * n, c.rtype, elems * nn);
      staged_in_place = !s.direct();
      a.send = s.ptr();
      a.recv = in_place_send ? s.ptr() + static_cast<std::size_t>(r) * chunk : output(c.rbuf, c.rcount, c.rtype, elems);
      break;
    }
    case Op::alltoall:
      a.recv = output(c.rbuf, c.rcount * n, c.rtype, elems * nn);
      if (in_place_send) out->load();
      a.send = in_place_send ? a.recv : input(c.sbuf, c.scount * n, c.stype, elems * nn).ptr();
      break;
  }
  try {
    run_entry(*p.entry, ctx.transport(), a);
  } catch (const NotSupported& e) {
    ctx.refuse(p.entry, p.entry->algo + " cannot: " + e.what());
    p.why = *ctx.refused(p.entry);
    p.entry = nullptr;
    return -1;
  }
  if (c.op == Op::reduce_scatter && in_place_send) {
    // The result from this rank's block of the (staged) input to the start of the buffer.
    if (staged_in_place)
      restage(ctx, a.recv, static_cast<int>(elems), p.sig.leaf, c.rbuf, c.rcount, c.rtype);
    else if (r != 0)
      std::memmove(c.rbuf, a.recv, chunk);
  }
  if (out) out->store();
  return MPI_SUCCESS;
}

}  // namespace

int Preload::serve(const Call& c, LibraryCall library) {
  using Clock = std::chrono::steady_clock;
  const bool timed = summary_.on();
  const Clock::time_point t0 = timed ? Clock::now() : Clock::time_point{};
  Plan p;
  int rc = MPI_SUCCESS;
  if (busy_) {
    summary_.reentered();
    p.why = "re-entered (a collbench bug)";
    rc = library();
  } else {
    busy_ = true;
    try {
      decision_.decide(c, p, timed);
      if (!p.entry || run_chosen(c, p) < 0) rc = library();
    } catch (const std::exception& e) {
      // A failure inside an algorithm: the ranks are mid-collective, so no library call can stand
      // in for it. Say where, and end the job as MPI's default error handler would.
      std::fprintf(stderr, "%s: rank %d: %s with %s failed: %s\n", kSelf, world_rank(),
                   std::string(mpi_library::call_name(c.op)).c_str(), p.entry ? p.entry->algo.c_str() : "(deciding)",
                   e.what());
      std::fflush(stderr);
      PMPI_Abort(c.comm == MPI_COMM_NULL ? MPI_COMM_WORLD : c.comm, 1);
    }
    busy_ = false;
  }
  if (timed) {
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    summary_.record(c.op, p.entry ? std::string_view(p.entry->algo) : std::string_view("library"), p.why, p.bytes, s);
  }
  return rc;
}

int serve(Preload& p, const Call& c, LibraryCall library) { return p.serve(c, library); }

}  // namespace collbench::preload
