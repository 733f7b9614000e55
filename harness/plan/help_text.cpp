#include "harness/plan/help_text.hpp"

#include <vector>

namespace collbench {
namespace {

std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

}  // namespace

std::string wrap_entry(std::string_view head, std::string_view text, std::size_t indent, std::size_t width) {
  std::string out(head);
  std::string line;
  if (out.empty()) {  // no head: the first line starts at column 0, the rest at `indent`
  } else if (out.find_first_not_of(' ') != std::string::npos && out.size() + 2 > indent && !text.empty()) {
    // no two spaces left after the head: the text below it
    out += '\n';
    line.assign(indent, ' ');
  } else {
    line = std::move(out);
    out.clear();
    line.resize(indent, ' ');
  }
  bool empty = true;  // no word on `line` yet
  for (std::string_view w : words_of(text)) {
    if (!empty && line.size() + 1 + w.size() > width) {
      out += line + '\n';
      line.assign(indent, ' ');
      empty = true;
    }
    if (!empty) line += ' ';
    line += w;
    empty = false;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return out + line + '\n';
}

std::string wrap_text(std::string_view text, std::size_t width) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const std::size_t lead = line.find_first_not_of(' ');
    const std::size_t cut = line.size() <= width || lead == std::string_view::npos ? std::string_view::npos
                                                                                     : line.rfind(' ', width);
    if (cut == std::string_view::npos || cut <= lead) {  // fits (or cannot be cut): as it is
      out += std::string(line) + '\n';
      continue;
    }
    // The first line keeps its own spacing (aligned columns); the rest is wrapped 2 deeper.
    out += std::string(line.substr(0, cut)) + '\n';
    const std::size_t indent = lead + 2;
    out += wrap_entry(std::string(indent, ' '), line.substr(cut + 1), indent, width);
  }
  return out;
}

}  // namespace collbench
