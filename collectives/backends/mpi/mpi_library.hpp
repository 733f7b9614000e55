#pragma once
// The MPI library's collective calls (mpi_library.cpp), one blocking MPI call each on the
// transport's communicator. The library variants (coll/han, coll/tuned's forced algorithms)
// run the same calls on a communicator of their own.
#include <typeinfo>

#include "collectives/collective.hpp"
#include "collectives/registry.hpp"
#include "collectives/backends/mpi/mpi_transport.hpp"

namespace collbench::mpi_library {

[[noreturn]] void not_mpi(Transport& t);  // NotSupported, saying why
// `t` as the MPI transport; NotSupported on any other backend. MpiTransport is final, so an
// exact type check is the same test as a dynamic_cast at a fraction of its cost; inline, as
// it is on every library call's path.
inline MpiTransport& mpi(Transport& t) {
  if (typeid(t) != typeid(MpiTransport)) [[unlikely]] not_mpi(t);
  return static_cast<MpiTransport&>(t);
}

void bcast(Transport& t, const CollArgs& a);
void reduce(Transport& t, const CollArgs& a);
void allreduce(Transport& t, const CollArgs& a);
void gather(Transport& t, const CollArgs& a);
void allgather(Transport& t, const CollArgs& a);
void scatter(Transport& t, const CollArgs& a);
void reduce_scatter(Transport& t, const CollArgs& a);  // MPI_Reduce_scatter_block
void alltoall(Transport& t, const CollArgs& a);
// The op's call bound once on `t` (the MPI library entries' PrepareFn, for any op): what a
// variant that wraps the plain call (MPICH's forced algorithms) calls.
PreparedCall bind(Op op, Transport& t, const CollArgs& a);

// The MPI call an op's library entry makes ("MPI_Bcast", "MPI_Reduce_scatter_block").
std::string_view call_name(Op op);

// Open MPI's coll/tuned name of an op, as in coll_tuned_<name>_algorithm ("bcast",
// "reduce_scatter_block": the call reduce_scatter makes).
std::string_view tuned_name(Op op);

// What the plain library entries run with: coll/tuned's switch and forced algorithm for the
// op as they stand ({} on an MPI without them).
LibraryConfig default_config(const AlgoEntry& e, const CollArgs& a);

}  // namespace collbench::mpi_library
