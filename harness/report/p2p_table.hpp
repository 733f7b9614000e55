#pragma once
// The pingpong part of the table on rank 0: per size, the intra-node pair and the inter-node
// pair side by side (time p50, bandwidth each; the median over pairs when a class has several)
// and the inter/intra time ratio. With --pairs all, a pair matrix at the smallest size (time)
// and at the largest (bandwidth) closes the block.
#include <cstdio>
#include <string>
#include <vector>

#include "harness/plan/plan.hpp"
#include "harness/results/result.hpp"

namespace collbench {

class P2pTable {
 public:
  P2pTable(std::FILE* out, const P2pBlock& block, std::vector<std::string> host_of_rank);
  void begin();
  void add_row(const std::vector<PointResult>& row);  // one size: one result per pair
  void end();

 private:
  void print_column_header(const std::vector<PointResult>& row) const;
  void print_matrix(const std::vector<PointResult>& row, bool bandwidth) const;

  std::FILE* out_;
  const P2pBlock& block_;
  std::vector<std::string> host_of_rank_;
  std::vector<std::vector<PointResult>> rows_;
};

}  // namespace collbench
