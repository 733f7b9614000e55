#pragma once
// libcollbench-pmpi.so: MPI's collectives served by collbench's algorithms inside any MPI
// program, through the MPI profiling interface (docs/preload.md). entry_points.cpp defines the
// MPI_ functions; each describes its call (Call) and hands it to intercept(), which serves it
// with the algorithm the tuning file names, or calls the library (PMPI_) for anything it does
// not cover. The rest, a file a job: signature.hpp (what a call's datatype says), settings.hpp
// (what every rank starts from), decision.hpp (which algorithm serves a call), context.hpp (what
// is kept per communicator), serving.cpp (the call served, or the library's), summary.hpp (the
// counts and the report at MPI_Finalize), state.hpp and preload.cpp (the process's Preload, its
// start and stop).
//
// State: the one Preload object of the process. The PMPI mechanism leaves no other place for
// it: MPI_Allreduce is called with the application's arguments only, so what it needs beyond
// them (the tuning file, the thread level, the summary) lives between MPI_Init's wrapper, which
// makes it, and MPI_Finalize's, which ends it. Per communicator state is not global: it hangs
// on the application's communicator as an MPI attribute (Context, context.hpp).
#include <mpi.h>

#include <cstddef>
#include <type_traits>

#include "collectives/op_traits.hpp"

namespace collbench::preload {

// One collective call as the application made it, arguments as given. Calls with one count
// and type (MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block) give them to both
// sides; MPI_Bcast's buffer is the receive side.
struct Call {
  Op op;
  MPI_Comm comm;
  MPI_Op mpi_op = MPI_OP_NULL;  // reducing ops
  int root = 0;                 // rooted ops
  const void* sbuf = nullptr;
  int scount = 0;
  MPI_Datatype stype = MPI_DATATYPE_NULL;
  void* rbuf = nullptr;
  int rcount = 0;
  MPI_Datatype rtype = MPI_DATATYPE_NULL;
};

// Tables per op (a context's choices, the summary's rows) are indexed by op_index.
constexpr std::size_t kOps = 8;
constexpr std::size_t op_index(Op op) { return static_cast<std::size_t>(op); }

// The library's own call for a Call: a reference to the wrapper's lambda (no allocation).
struct LibraryCall {
  int (*fn)(void*);
  void* obj;
  int operator()() const { return fn(obj); }
};

class Preload;
// The process's Preload, or null before MPI_Init's wrapper ran, after MPI_Finalize's, and when
// this library runs against another MPI than the one it was built for.
Preload* instance();

// MPI_Init/MPI_Init_thread's wrapper, after PMPI_Init*: checks, reads the tuning file (rank 0,
// broadcast), says in one line on stderr what will not be served. Collective over MPI_COMM_WORLD.
void start(int provided);
// MPI_Finalize's wrapper, before PMPI_Finalize: the summary, WORLD's and SELF's contexts.
void stop();
// Whether this process runs the MPI this library was built for (MPI_Get_library_version), with
// one line on stderr when not; called before PMPI_Init*.
bool right_mpi();

int serve(Preload& p, const Call& c, LibraryCall library);

template <class Library>
int intercept(const Call& c, Library&& library) {
  Preload* p = instance();
  if (!p) return library();
  using L = std::remove_reference_t<Library>;
  return serve(*p, c, LibraryCall{[](void* o) { return (*static_cast<L*>(o))(); }, &library});
}

}  // namespace collbench::preload
