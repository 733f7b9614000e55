#pragma once
// What the preload library may decide from (preload.md "The fallback rules"): only what MPI
// requires to match on every rank of a collective. A datatype handle does not: one rank may pass
// 4 x MPI_INT where another passes 1 x a contiguous type of 4 MPI_INT, and both are correct. So
// the decision never asks "is this handle predefined?" but reads the type *signature*: the
// sequence of basic types, which MPI requires to be equal. A signature of n elements of one
// predefined type T is served (a rank whose handle is derived stages its buffer through a
// contiguous n x T copy, made by MPI itself); any other signature (a struct of several basic
// types) falls back on every rank alike. An op is predefined (MPI_SUM ...) or user-defined on
// every rank alike, since MPI requires the same op everywhere.
#include <mpi.h>

#include <cstddef>
#include <optional>

#include "collectives/core/dtype.hpp"
#include "collectives/core/reduce_op.hpp"

namespace collbench::preload {

struct Signature {
  // n elements of the predefined type `leaf`; false: any other signature (why says which).
  bool homogeneous = false;
  const char* why = "";
  MPI_Datatype leaf = MPI_DATATYPE_NULL;
  std::size_t leaf_bytes = 0;
  std::size_t n = 0;
  // The handle itself is `leaf` (a predefined type): the buffer is used as it is. Local: never
  // part of the decision, only of how this rank hands its buffer over.
  bool direct = false;
  // The collbench type of `leaf` for reductions, when it has one (MPI_INT -> int32 ...).
  std::optional<DType> dtype;
};

// The signature of `count` elements of `type`. Only PMPI_ calls.
Signature signature(MPI_Datatype type, int count);

// The collbench reduction of a predefined MPI op (MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN); nullopt
// for any other (user-defined, MPI_LAND, MPI_MAXLOC, ...).
std::optional<RedOp> reduction(MPI_Op op);

}  // namespace collbench::preload
