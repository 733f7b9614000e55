#pragma once
// Names as people type them: op and algorithm names compared case-insensitively and without
// '_' / '-' (all_reduce, allReduce, AllReduce -> allreduce; Ring -> ring), the common aliases
// (bcast), and "did you mean" for a near miss (edit distance). Pure.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

// Lower case, '_' and '-' dropped: the form two spellings of one name share.
std::string folded(std::string_view name);

// Edit distance: insert, delete, substitute, swap two neighbours (rnig -> ring): 1 each.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate whose folded form equals name's folded form, if exactly one does.
std::optional<std::string> same_name(std::string_view name, const std::vector<std::string>& candidates);

// The candidate nearest to `name` (folded), when close enough to be a typo: at most 1 edit
// for names up to 4 letters, 2 up to 8, else 3. Ties: the first candidate.
std::optional<std::string> nearest_name(std::string_view name, const std::vector<std::string>& candidates);

// " (did you mean X?)" for nearest_name, or "".
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

// Every op's canonical name: the collectives (kAllOps order), then pingpong.
std::vector<std::string> op_name_list();

// An op as typed: a collective's name or pingpong in any of the spellings above, or an alias
// (bcast, reducescatter, all_to_all ...): the canonical name, or nothing.
std::optional<std::string> canonical_op_name(std::string_view typed);

}  // namespace collbench
