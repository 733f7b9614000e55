#include "harness/plan/spelling.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>

#include "collectives/collective.hpp"
#include "harness/plan/p2p_method.hpp"

namespace collbench {

std::string folded(std::string_view name) {
  std::string out;
  for (char c : name)
    if (c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: rows i-2, i-1 and i of the table.
  std::vector<std::size_t> prev2(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], prev2[j - 2] + 1);
    }
    prev2.swap(prev);
    prev.swap(row);
  }
  return prev[b.size()];
}

std::optional<std::string> same_name(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string f = folded(name);
  std::optional<std::string> found;
  for (const auto& c : candidates)
    if (folded(c) == f) {
      if (found && *found != c) return std::nullopt;  // ambiguous: two names fold alike
      found = c;
    }
  return found;
}

std::optional<std::string> nearest_name(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string f = folded(name);
  const std::size_t most = f.size() <= 4 ? 1 : f.size() <= 8 ? 2 : 3;
  std::optional<std::string> best;
  std::size_t best_d = most + 1;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(f, folded(c));
    // A library variant by its own name: "binomal" is near "library:binomial".
    if (const std::size_t colon = c.find(':'); colon != std::string::npos && name.find(':') == std::string_view::npos)
      d = std::min(d, edit_distance(f, folded(std::string_view(c).substr(colon + 1))));
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  const auto n = nearest_name(name, candidates);
  return n ? " (did you mean " + *n + "?)" : "";
}

std::optional<std::string> canonical_op_name(std::string_view typed) {
  // Aliases as other tools spell them (MPI_Bcast, nccl-tests' file names, OSU's binaries).
  static constexpr struct {
    std::string_view alias, op;
  } kAliases[] = {{"bcast", "broadcast"}, {"latency", "pingpong"}, {"pingpongs", "pingpong"}};
  const std::string f = folded(typed);
  for (const auto& a : kAliases)
    if (f == a.alias) return std::string(a.op);
  return same_name(typed, op_name_list());
}

std::vector<std::string> op_name_list() {
  std::vector<std::string> names;
  for (Op op : kAllOps) names.emplace_back(op_name(op));
  names.emplace_back(kPingpongOp);
  return names;
}

}  // namespace collbench
