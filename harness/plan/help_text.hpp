#pragma once
// Help text laid out for a terminal: words wrapped at a width, continuation lines indented.
#include <cstddef>
#include <string>
#include <string_view>

namespace collbench {

// `head` (padded to `indent` columns, or on a line of its own when it leaves less than two spaces) then `text` wrapped
// at `width`, continuation lines indented by `indent`; each line ends in '\n'. A word longer
// than the room left is put on a line of its own.
std::string wrap_entry(std::string_view head, std::string_view text, std::size_t indent, std::size_t width);

// Every line of `text` longer than `width` cut at its last space that fits (the first line keeps
// its spacing), the rest wrapped two columns deeper than the line's own indent.
std::string wrap_text(std::string_view text, std::size_t width);

}  // namespace collbench
