#pragma once
// The human-readable table on rank 0, laid out like nccl-tests: a header with the run's
// facts, then per block (op, dtype, redop, placement) one row per size with the algorithms
// side by side (time p50, algbw, busbw, #wrong each), wrapped into several tables when they
// do not fit the terminal width. Skip reasons are listed under each table.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "harness/report/p2p_table.hpp"
#include "harness/plan/plan.hpp"
#include "harness/report/report_json.hpp"

namespace collbench {

class TableReport {
 public:
  // `width`: terminal columns to fit (COLUMNS, else 132).
  TableReport(std::FILE* out, int width);

  void header(const RunRecord& run);
  void begin_block(const Block& block);
  void add_row(const std::vector<PointResult>& row);  // one size, one result per algo (block order)
  void end_block();
  void footer();

  // How many algorithms fit side by side in `width` columns (at least 1).
  static int algos_per_table(int width);

 private:
  void print_column_header(std::size_t first, std::size_t n) const;
  void print_row(const std::vector<PointResult>& row, std::size_t first, std::size_t n) const;
  void print_skips(std::size_t first, std::size_t n) const;
  void begin_ddp(const DdpBlock& block);
  void print_ddp_row(const PointResult& r) const;

  std::FILE* out_;
  int width_;
  const CollectiveBlock* block_ = nullptr;  // the collective block being printed
  std::vector<std::string> host_of_rank_;  // from the header, for pingpong pair labels
  std::optional<P2pTable> p2p_;            // set while a pingpong block is printed
  const DdpBlock* ddp_ = nullptr;          // set while a --workload ddp block is printed
  std::vector<std::vector<PointResult>> rows_;
  bool streaming_ = false;
  // Totals for the footer.
  std::uint64_t wrong_elems_ = 0;
  long points_ = 0, wrong_points_ = 0, skipped_points_ = 0, measured_ = 0;
  double busbw_sum_ = 0;
};

int terminal_width();  // COLUMNS when set and sane, else 132

}  // namespace collbench
