#pragma once
// MPICH's enum control variables as MPI_T shows them (MPICH 4.0.2, checked): type MPI_INT, no
// MPI_T enum, and the enumerators only in the description, one "name - text" line each, with
// the line breaks dropped ("...algorithmauto - Internal algorithm selection (...)nb - Force
// nonblocking algorithmsmp - Force smp algorithm..."). The value of an enumerator is its
// position in that list (MPICH generates the C enum from the same lines, in order). Pure text
// functions, so they are unit-tested without MPICH; the forcing test (tests/mpich) checks the
// values against what MPICH then runs.
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace collbench::mpich {

// The value of enumerator `item` in `description`; nullopt where no entry names it. An entry
// whose name is exactly `item` wins over one where it is glued to the text before it.
std::optional<int> enum_value(std::string_view description, std::string_view item);

// The one of `names` whose value is `value` (the folded text alone cannot split "algorithmsmp"
// into the end of one line and the next name); nullopt where none is.
std::optional<std::string> enum_name(std::string_view description, int value, std::span<const std::string_view> names);

}  // namespace collbench::mpich
