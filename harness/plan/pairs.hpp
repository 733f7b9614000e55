#pragma once
// Which rank pairs a point-to-point benchmark measures (--pairs auto|all|0-1,0-4), and whether
// each pair stays within a node. Pure: no MPI, tested without communication.
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

struct RankPair {
  int src = 0;  // the initiator: it sends first and its clock is the one reported
  int dst = 1;
  friend bool operator==(const RankPair&, const RankPair&) = default;
};

// What was asked for, before the world is known.
struct PairSpec {
  enum class Kind { automatic, all, list };
  Kind kind = Kind::automatic;
  std::vector<RankPair> list;  // Kind::list: the pairs as given (repeats dropped)
  friend bool operator==(const PairSpec&, const PairSpec&) = default;
};

// "auto", "all" or "SRC-DST[,SRC-DST...]" with SRC != DST; throws UsageError.
PairSpec parse_pairs(std::string_view text);
std::string pairs_text(const PairSpec& spec);  // back to the accepted syntax ("0-1,0-4")

struct SelectedPair {
  RankPair ranks;
  bool intra = false;  // both ranks on one node
  friend bool operator==(const SelectedPair&, const SelectedPair&) = default;
};
constexpr const char* link_name(const SelectedPair& p) { return p.intra ? "intra" : "inter"; }

// The pairs to measure on a world whose rank r runs on node node_of_rank[r]:
//   auto: the first two ranks sharing a node (lowest src, then lowest dst), then rank 0 and the
//         first rank on another node; each only when the layout has one (1 node: intra only;
//         one rank per node: inter only);
//   all:  every pair i < j, in order;
//   list: as given.
// Throws UsageError when a listed rank is outside the world or the world has one rank.
std::vector<SelectedPair> select_pairs(const PairSpec& spec, const std::vector<int>& node_of_rank);

}  // namespace collbench
