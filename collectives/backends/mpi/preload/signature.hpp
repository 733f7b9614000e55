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
#include <vector>

#include "collectives/core/dtype.hpp"
#include "collectives/core/reduce_op.hpp"

namespace collbench::preload {

struct Signature {
  // n elements of the predefined type `leaf`; false: any other signature (why says which).
  bool homogeneous = false;
  const char* why = "";
  std::size_t bytes = 0;  // count x the type's size (the message's bytes on this side)
  MPI_Datatype leaf = MPI_DATATYPE_NULL;
  std::size_t leaf_bytes = 0;
  std::size_t n = 0;
  // The handle itself is `leaf` (a predefined type): the buffer is used as it is. Local: never
  // part of the decision, only of how this rank hands its buffer over.
  bool direct = false;
};

// The signature of `count` elements of `type`. Only PMPI_ calls.
Signature signature(MPI_Datatype type, int count);

// signature() with the common predefined types answered from a table made once (after
// MPI_Init): no MPI call on the path most calls take.
class Signatures {
 public:
  Signatures();
  Signature of(MPI_Datatype type, int count) const;

 private:
  struct Known {
    MPI_Datatype type;
    std::size_t size;
  };
  std::vector<Known> known_;
};

// The collbench type a predefined MPI type reduces as (MPI_INT -> int32 ...), when it has one.
std::optional<DType> reduced_as(MPI_Datatype basic);

// The collbench reduction of a predefined MPI op (MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN); nullopt
// for any other (user-defined, MPI_LAND, MPI_MAXLOC, ...).
std::optional<RedOp> reduction(MPI_Op op);

}  // namespace collbench::preload
