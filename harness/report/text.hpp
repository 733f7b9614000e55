#pragma once
// Text laid out in terminal columns, for the report tables (report_table, p2p_table).
#include <algorithm>
#include <cstddef>
#include <string>

namespace collbench::text {

// Columns a string takes on a terminal (UTF-8: continuation bytes take none).
inline int display_width(const std::string& s) {
  int n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

inline std::string pad_right(const std::string& s, int width) {
  return s + std::string(static_cast<std::size_t>(std::max(0, width - display_width(s))), ' ');
}

// `text` in the middle of `width` columns (the odd space on the left); a wider text is kept whole.
inline std::string centered(const std::string& text, int width) {
  const int pad = std::max(0, width - display_width(text));
  return std::string(static_cast<std::size_t>(pad - pad / 2), ' ') + text +
         std::string(static_cast<std::size_t>(pad / 2), ' ');
}

}  // namespace collbench::text
