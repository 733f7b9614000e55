#pragma once
// Which rank runs on which node, and the groups node-aware algorithms split a world into:
//   node    the ranks of one node, in rank order (their index is the local rank);
//   leaders one rank per node, the lowest, in node order;
//   rail    the ranks with the same local rank on every node that has one, in node order (NCCL's
//           multi-node rings: all of a node's ranks use the network at once).
// Any placement: blocked (0 0 1 1), round-robin (0 1 0 1) or uneven (0 0 0 1; a rail then
// misses the nodes that are too small). Pure: built from a rank -> node map, no MPI.
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace collbench::patterns {

class NodeLayout {
 public:
  // node_of_rank[r]: any label of rank r's node (equal labels = one node). Nodes are numbered
  // 0.. in order of their lowest rank, whatever the labels.
  explicit NodeLayout(const std::vector<int>& node_of_rank) {
    if (node_of_rank.empty()) throw std::invalid_argument("a node layout needs at least one rank");
    std::vector<int> labels;  // label of node i
    for (int label : node_of_rank) {
      std::size_t node = 0;
      while (node < labels.size() && labels[node] != label) ++node;
      if (node == labels.size()) {
        labels.push_back(label);
        ranks_.emplace_back();
      }
      local_rank_.push_back(static_cast<int>(ranks_[node].size()));
      node_.push_back(static_cast<int>(node));
      ranks_[node].push_back(static_cast<int>(node_.size()) - 1);
    }
  }

  int world_size() const { return static_cast<int>(node_.size()); }
  int nodes() const { return static_cast<int>(ranks_.size()); }
  int node_of(int rank) const { return node_.at(static_cast<std::size_t>(rank)); }
  int local_rank(int rank) const { return local_rank_.at(static_cast<std::size_t>(rank)); }
  int local_size(int node) const { return static_cast<int>(ranks_.at(static_cast<std::size_t>(node)).size()); }
  const std::vector<int>& ranks_on(int node) const { return ranks_.at(static_cast<std::size_t>(node)); }
  int leader(int node) const { return ranks_on(node).front(); }
  bool is_leader(int rank) const { return local_rank(rank) == 0; }

  int max_local_size() const {
    int most = 0;
    for (const auto& r : ranks_) most = std::max(most, static_cast<int>(r.size()));
    return most;
  }
  bool uneven() const {
    for (const auto& r : ranks_)
      if (r.size() != ranks_.front().size()) return true;
    return false;
  }

  std::vector<int> leaders() const { return rail(0); }
  // The ranks with local rank `local` (0 .. max_local_size() - 1), in node order.
  std::vector<int> rail(int local) const {
    std::vector<int> out;
    for (const auto& r : ranks_)
      if (local >= 0 && static_cast<std::size_t>(local) < r.size()) out.push_back(r[static_cast<std::size_t>(local)]);
    return out;
  }

  // Colour and key of `rank` for Transport::split, one group per node / per rail, members ordered
  // as above. The leaders' split is the rail of local rank 0 (everyone else: no group, colour -1).
  struct Split {
    int color;
    int key;
  };
  Split node_split(int rank) const { return {node_of(rank), local_rank(rank)}; }
  Split rail_split(int rank) const { return {local_rank(rank), node_of(rank)}; }
  Split leader_split(int rank) const { return {is_leader(rank) ? 0 : -1, node_of(rank)}; }

 private:
  std::vector<int> node_;                // rank -> node
  std::vector<int> local_rank_;          // rank -> index among its node's ranks
  std::vector<std::vector<int>> ranks_;  // node -> its ranks, ascending
};

}  // namespace collbench::patterns
