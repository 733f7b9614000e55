#pragma once
// MPICH's side of the MPI library entries (mpi_mpich.cpp, built only with COLLBENCH_MPI=mpich).
#include "collectives/registry.hpp"

namespace collbench {

// What MPICH chooses the op's algorithm with, as it stands: MPIR_CVAR_DEVICE_COLLECTIVES,
// MPIR_CVAR_<OP>_INTRA_ALGORITHM and MPIR_CVAR_COLLECTIVE_FALLBACK, by enumerator name.
LibraryConfig mpich_default_config(Op op);

}  // namespace collbench
