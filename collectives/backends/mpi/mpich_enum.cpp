#include "collectives/backends/mpi/mpich_enum.hpp"

#include <cctype>

namespace collbench::mpich {
namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Calls f(k, word) for each entry k: the separator is " - " after one or more blanks, the word
// the run of identifier characters just before those blanks ("theuser-specified" and
// "Recursive-Doubling" have no blanks around the dash and are no separators).
template <class F>
void for_each_entry(std::string_view d, F f) {
  int k = 0;
  for (std::size_t i = 0; i + 2 < d.size(); ++i) {
    if (d[i] != ' ' || d[i + 1] != '-' || d[i + 2] != ' ') continue;
    std::size_t end = i;
    while (end > 0 && d[end - 1] == ' ') --end;
    std::size_t begin = end;
    while (begin > 0 && word_char(d[begin - 1])) --begin;
    if (begin == end) continue;  // " - " after no word: prose, not an entry
    f(k++, d.substr(begin, end - begin));
  }
}

}  // namespace

std::optional<int> enum_value(std::string_view description, std::string_view item) {
  if (item.empty()) return std::nullopt;
  std::optional<int> exact, glued;
  for_each_entry(description, [&](int k, std::string_view word) {
    if (word == item && !exact) exact = k;
    else if (word.ends_with(item) && !glued) glued = k;
  });
  return exact ? exact : glued;
}

std::optional<std::string> enum_name(std::string_view description, int value, std::span<const std::string_view> names) {
  for (std::string_view n : names)
    if (enum_value(description, n) == value) return std::string(n);
  return std::nullopt;
}

}  // namespace collbench::mpich
