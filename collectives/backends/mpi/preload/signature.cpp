#include "collectives/backends/mpi/preload/signature.hpp"

#include <vector>

namespace collbench::preload {

std::optional<DType> reduced_as(MPI_Datatype t) {
  if (t == MPI_INT8_T || t == MPI_SIGNED_CHAR) return DType::int8;
  if (t == MPI_UINT8_T || t == MPI_UNSIGNED_CHAR) return DType::uint8;
  if (t == MPI_INT32_T || (t == MPI_INT && sizeof(int) == 4)) return DType::int32;
  if (t == MPI_INT64_T || (t == MPI_LONG && sizeof(long) == 8) || (t == MPI_LONG_LONG && sizeof(long long) == 8))
    return DType::int64;
  if (t == MPI_FLOAT) return DType::float32;
  if (t == MPI_DOUBLE) return DType::float64;
  // Fortran's (MPICH's Fortran bindings call the C functions: docs/preload.md), by their size
  // in this MPI.
  int size = 0;
  PMPI_Type_size(t, &size);
  for (MPI_Datatype f : {MPI_INTEGER, MPI_INTEGER4, MPI_INTEGER8})
    if (t == f && f != MPI_DATATYPE_NULL)
      return size == 4 ? std::optional(DType::int32) : size == 8 ? std::optional(DType::int64) : std::nullopt;
  for (MPI_Datatype f : {MPI_REAL, MPI_REAL4, MPI_REAL8, MPI_DOUBLE_PRECISION})
    if (t == f && f != MPI_DATATYPE_NULL)
      return size == 4 ? std::optional(DType::float32) : size == 8 ? std::optional(DType::float64) : std::nullopt;
  return std::nullopt;
}

namespace {

// Frees a type handed out by PMPI_Type_get_contents (derived ones only: predefined ones must
// not be freed).
void release(MPI_Datatype t) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) == MPI_SUCCESS && combiner != MPI_COMBINER_NAMED)
    PMPI_Type_free(&t);
}

// Walks `t`'s constructors down to the predefined types its signature is made of: true when
// there is exactly one (in `leaf`; a block of length 0 adds nothing to a signature), false
// with `why` for several, or for a constructor whose parts are not read here.
bool single_leaf(MPI_Datatype t, MPI_Datatype& leaf, const char*& why) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS) {
    why = "datatype: not a datatype";
    return false;
  }
  if (combiner == MPI_COMBINER_NAMED) {
    if (leaf == MPI_DATATYPE_NULL) leaf = t;
    if (leaf != t) why = "datatype: several basic types";
    return leaf == t;
  }
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
    case MPI_COMBINER_RESIZED:
    case MPI_COMBINER_STRUCT:
      break;
    default:
      why = "datatype: a Fortran 90 parameterized type";
      return false;
  }
  std::vector<int> ints(static_cast<std::size_t>(ni) + 1);
  std::vector<MPI_Aint> addrs(static_cast<std::size_t>(na) + 1);
  std::vector<MPI_Datatype> types(static_cast<std::size_t>(nd) + 1);
  if (PMPI_Type_get_contents(t, ni, na, nd, ints.data(), addrs.data(), types.data()) != MPI_SUCCESS) {
    why = "datatype: contents MPI does not give";
    return false;
  }
  bool one = true;
  for (int i = 0; i < nd; ++i) {
    // A struct's block lengths are ints[1..count]: an empty block is no part of the signature.
    const bool empty = combiner == MPI_COMBINER_STRUCT && ints[static_cast<std::size_t>(i) + 1] == 0;
    if (one && !empty) one = single_leaf(types[static_cast<std::size_t>(i)], leaf, why);
    release(types[static_cast<std::size_t>(i)]);
  }
  return one;
}

}  // namespace

Signature signature(MPI_Datatype type, int count) {
  Signature s;
  MPI_Count size = 0;
  if (count < 0 || PMPI_Type_size_x(type, &size) != MPI_SUCCESS) {
    s.why = "datatype: not a datatype";
    return s;
  }
  s.bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(size);
  if (size == 0 || count == 0) {
    // Empty on every rank alike (signatures match): nothing to move, and no basic type to
    // decide a reduction by. The library's call.
    s.why = "an empty message";
    return s;
  }
  if (!single_leaf(type, s.leaf, s.why)) return s;
  MPI_Count leaf_size = 0;
  PMPI_Type_size_x(s.leaf, &leaf_size);
  if (leaf_size <= 0) {
    s.why = "datatype: a basic type of no size";
    return s;
  }
  s.homogeneous = true;
  s.leaf_bytes = static_cast<std::size_t>(leaf_size);
  s.n = static_cast<std::size_t>(count) * static_cast<std::size_t>(size) / s.leaf_bytes;
  s.direct = s.leaf == type;
  return s;
}

std::optional<RedOp> reduction(MPI_Op op) {
  if (op == MPI_SUM) return RedOp::sum;
  if (op == MPI_PROD) return RedOp::prod;
  if (op == MPI_MAX) return RedOp::max;
  if (op == MPI_MIN) return RedOp::min;
  return std::nullopt;
}

Signatures::Signatures() {
  // The most used first: the lookup is a linear scan.
  for (MPI_Datatype t : {MPI_DOUBLE,      MPI_FLOAT,           MPI_INT,      MPI_BYTE,           MPI_CHAR,
                         MPI_LONG,        MPI_LONG_LONG,       MPI_UNSIGNED, MPI_UNSIGNED_LONG,  MPI_INT64_T,
                         MPI_INT32_T,     MPI_UINT64_T,        MPI_UINT32_T, MPI_INT8_T,         MPI_UINT8_T,
                         MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR,   MPI_SHORT,    MPI_UNSIGNED_SHORT, MPI_INTEGER,
                         MPI_REAL,        MPI_DOUBLE_PRECISION}) {
    int size = 0;
    if (t != MPI_DATATYPE_NULL && PMPI_Type_size(t, &size) == MPI_SUCCESS && size > 0)
      known_.push_back({t, static_cast<std::size_t>(size)});
  }
}

Signature Signatures::of(MPI_Datatype type, int count) const {
  for (const Known& k : known_)
    if (k.type == type) {
      Signature s;
      if (count <= 0) {
        s.why = count == 0 ? "an empty message" : "datatype: not a datatype";
        return s;
      }
      s.homogeneous = s.direct = true;
      s.leaf = type;
      s.leaf_bytes = k.size;
      s.n = static_cast<std::size_t>(count);
      s.bytes = s.n * k.size;
      return s;
    }
  return signature(type, count);
}

}  // namespace collbench::preload
