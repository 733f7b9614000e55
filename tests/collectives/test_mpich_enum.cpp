// MPICH's enum control variables read from their folded MPI_T descriptions (mpich_enum.hpp).
// The descriptions below are MPICH 4.0.2's, byte for byte as MPI_T_cvar_get_info returned them.
#include <gtest/gtest.h>

#include "collectives/backends/mpi/mpich_enum.hpp"

namespace collbench::mpich {
namespace {

constexpr std::string_view kAllreduce =
    "Variable to select allreduce algorithmauto - Internal algorithm selection (can be overridden with "
    "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE)nb                       - Force nonblocking algorithmsmp        "
    "              - Force smp algorithmrecursive_doubling       - Force recursive doubling "
    "algorithmreduce_scatter_allgather - Force reduce scatter allgather algorithm";
constexpr std::string_view kBcast =
    "Variable to select bcast algorithmauto - Internal algorithm selection (can be overridden with "
    "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE)binomial                                - Force Binomial Treenb     "
    "                                 - Force nonblocking algorithmsmp                                     - Force "
    "smp algorithmscatter_recursive_doubling_allgather    - Force Scatter Recursive-Doubling "
    "Allgatherscatter_ring_allgather                  - Force Scatter Ring";
constexpr std::string_view kDevice =
    "Variable to select whether the device can override theMPIR-level collective algorithms.all     - Always "
    "prefer the device collectivesnone    - Never pick the device collectivespercoll - Use the per-collective "
    "CVARs to decide";
constexpr std::string_view kFallback =
    "Variable to control what the MPI library should do if theuser-specified collective algorithm does not "
    "work for thearguments passed in by the user.error   - throw an errorprint   - print an error message and "
    "fallback to the internally selected algorithmsilent  - silently fallback to the internally selected "
    "algorithm";

TEST(MpichEnum, ValuesArePositionsInTheFoldedList) {
  EXPECT_EQ(enum_value(kAllreduce, "auto"), 0);
  EXPECT_EQ(enum_value(kAllreduce, "nb"), 1);
  EXPECT_EQ(enum_value(kAllreduce, "smp"), 2);
  EXPECT_EQ(enum_value(kAllreduce, "recursive_doubling"), 3);
  EXPECT_EQ(enum_value(kAllreduce, "reduce_scatter_allgather"), 4);
  EXPECT_EQ(enum_value(kBcast, "binomial"), 1);
  EXPECT_EQ(enum_value(kBcast, "scatter_recursive_doubling_allgather"), 4);  // "Recursive-Doubling" is no entry
  EXPECT_EQ(enum_value(kBcast, "scatter_ring_allgather"), 5);
  EXPECT_EQ(enum_value(kDevice, "all"), 0);
  EXPECT_EQ(enum_value(kDevice, "none"), 1);
  EXPECT_EQ(enum_value(kDevice, "percoll"), 2);
  EXPECT_EQ(enum_value(kFallback, "error"), 0);  // "theuser-specified" is no entry either
  EXPECT_EQ(enum_value(kFallback, "silent"), 2);
}

TEST(MpichEnum, UnknownNamesAndProseAreNone) {
  EXPECT_EQ(enum_value(kAllreduce, "ring"), std::nullopt);
  EXPECT_EQ(enum_value(kAllreduce, ""), std::nullopt);
  EXPECT_EQ(enum_value("no list here - at all", "here"), 0);  // a dash after a word is an entry
  EXPECT_EQ(enum_value("plain prose, no entries", "prose"), std::nullopt);
  // A name that is whole in one entry wins over the same letters ending a glued word earlier.
  EXPECT_EQ(enum_value("xring - a ring - b", "ring"), 1);
}

TEST(MpichEnum, NamesFromCandidates) {
  constexpr std::string_view device[] = {"all", "none", "percoll"};
  constexpr std::string_view some[] = {"recursive_doubling", "auto", "smp"};
  EXPECT_EQ(enum_name(kDevice, 2, device), "percoll");
  EXPECT_EQ(enum_name(kAllreduce, 0, some), "auto");
  EXPECT_EQ(enum_name(kAllreduce, 1, some), std::nullopt);  // nb: not a candidate
}

}  // namespace
}  // namespace collbench::mpich
