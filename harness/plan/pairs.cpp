#include "harness/plan/pairs.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

#include "collectives/core/error.hpp"

namespace collbench {
namespace {

constexpr const char* kPairsAccepted = "auto, all, or rank pairs SRC-DST with SRC != DST, e.g. 0-1,0-4";

int parse_rank(std::string_view s, std::string_view item) {
  int v = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || v < 0)
    throw UsageError("bad pair '" + std::string(item) + "'; accepted: " + kPairsAccepted);
  return v;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

SelectedPair classify(RankPair p, const std::vector<int>& node_of_rank) {
  return {p, node_of_rank[static_cast<std::size_t>(p.src)] == node_of_rank[static_cast<std::size_t>(p.dst)]};
}

// Lowest src, then lowest dst, of two ranks sharing a node.
std::optional<RankPair> first_intra(const std::vector<int>& nor) {
  const int n = static_cast<int>(nor.size());
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      if (nor[a] == nor[b]) return RankPair{a, b};
  return std::nullopt;
}

std::vector<SelectedPair> auto_pairs(const std::vector<int>& nor) {
  std::vector<SelectedPair> out;
  if (auto p = first_intra(nor)) out.push_back({*p, true});
  for (int b = 1; b < static_cast<int>(nor.size()); ++b)
    if (nor[b] != nor[0]) {
      out.push_back({{0, b}, false});
      break;
    }
  return out;
}

}  // namespace

PairSpec parse_pairs(std::string_view text) {
  text = trimmed(text);
  if (text == "auto") return {};
  if (text == "all") return {PairSpec::Kind::all, {}};
  PairSpec spec{PairSpec::Kind::list, {}};
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = trimmed(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    const std::size_t dash = item.find('-');
    if (dash == std::string_view::npos)
      throw UsageError("bad pair '" + std::string(item) + "'; accepted: " + kPairsAccepted);
    const RankPair p{parse_rank(item.substr(0, dash), item), parse_rank(item.substr(dash + 1), item)};
    if (p.src == p.dst)
      throw UsageError("pair '" + std::string(item) + "' names one rank twice; accepted: " + kPairsAccepted);
    if (std::find(spec.list.begin(), spec.list.end(), p) == spec.list.end()) spec.list.push_back(p);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return spec;
}

std::string pairs_text(const PairSpec& spec) {
  if (spec.kind == PairSpec::Kind::automatic) return "auto";
  if (spec.kind == PairSpec::Kind::all) return "all";
  std::string s;
  for (const auto& p : spec.list) s += (s.empty() ? "" : ",") + std::to_string(p.src) + "-" + std::to_string(p.dst);
  return s;
}

std::vector<SelectedPair> select_pairs(const PairSpec& spec, const std::vector<int>& node_of_rank) {
  const int n = static_cast<int>(node_of_rank.size());
  if (n < 2)
    throw UsageError("pingpong needs at least 2 ranks, the world has " + std::to_string(n) +
                     "; accepted: mpirun -np 2 or more");
  std::vector<SelectedPair> out;
  switch (spec.kind) {
    case PairSpec::Kind::automatic:
      return auto_pairs(node_of_rank);
    case PairSpec::Kind::all:
      for (int a = 0; a < n; ++a)
        for (int b = a + 1; b < n; ++b) out.push_back(classify({a, b}, node_of_rank));
      return out;
    case PairSpec::Kind::list:
      for (const auto& p : spec.list) {
        if (std::max(p.src, p.dst) >= n)
          throw UsageError("--pairs: pair " + std::to_string(p.src) + "-" + std::to_string(p.dst) +
                           " is outside the world of " + std::to_string(n) + " ranks; accepted: ranks 0.." +
                           std::to_string(n - 1));
        out.push_back(classify(p, node_of_rank));
      }
      return out;
  }
  return out;
}

}  // namespace collbench
