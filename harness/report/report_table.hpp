#pragma once
// The human-readable table on rank 0, laid out like nccl-tests: a header with the run's facts,
// then per table (an op at one dtype/redop/root; out-of-place and in-place side by side when
// both run) one row per size, printed as soon as every algorithm of every placement finished
// it: a column group per (placement, algorithm) — time p50, algbw, busbw, eff, #wrong; time and
// busbw only when that does not fit the width — and, with several algorithms, a "best" column
// per placement (the shared rule of report/ranking.hpp). Markers on doubtful points are
// explained once in the footer; skip reasons are listed under each table.
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "harness/plan/plan.hpp"
#include "harness/report/p2p_table.hpp"
#include "harness/results/records.hpp"

namespace collbench {

class TableReport {
 public:
  // `width`: terminal columns to fit (COLUMNS, else 132).
  TableReport(std::FILE* out, int width);

  void header(const RunRecord& run);
  // `blocks`: one table's blocks (plan.hpp table_ranges): a collective block's placements, or
  // one other block. They must outlive the table.
  void begin_table(std::span<const Block> blocks);
  // One block's results at one size (one per algorithm, block order); a collective table's row
  // is printed once every block of the table has given its results for the size.
  void add_row(const std::vector<PointResult>& row);
  void end_table();
  // The run's last lines. `exit_status`: 0 when the sweep ran to its end; otherwise the status
  // it ended with early (a signal's 128 + N, a failed rank's), said in the footer; a row some of
  // whose placements finished is printed as it stands.
  void footer(int exit_status = 0);

  // How the collective columns fit `width`: every column per group, time and busbw only, or
  // (wider than the width) time only. Exposed for tests.
  enum class Form { full, compact, narrow };
  static Form form_for(int width, std::size_t groups, bool eff_column);

 private:
  void begin_collective(std::span<const CollectiveBlock* const> blocks);
  void print_column_header() const;
  void print_row(const std::vector<std::vector<PointResult>>& row);
  void print_pending();
  void print_skips() const;
  void begin_ddp(const DdpBlock& block);
  void print_ddp_row(const PointResult& r) const;
  void count(const PointResult& r);

  std::FILE* out_;
  int width_;
  std::vector<std::string> host_of_rank_;  // from the header, for pingpong pair labels
  bool eff_ = false;                       // the run's link calibration is tight enough to judge by
  // The collective table being printed: its blocks (one per placement) and layout.
  std::vector<const CollectiveBlock*> blocks_;
  Form form_ = Form::full;
  bool best_ = false;
  bool best_seen_ = false;  // some table had a best column: the footer explains it
  std::size_t best_width_ = 0;
  std::vector<std::vector<PointResult>> pending_;  // this size's rows so far, one per block
  // (algo, reason) -> the sizes skipped for it, so a reason shared by a range is listed once.
  std::map<std::pair<std::string, std::string>, std::set<std::uint64_t>> skips_;
  std::optional<P2pTable> p2p_;    // set while a pingpong block is printed
  const DdpBlock* ddp_ = nullptr;  // set while a --workload ddp block is printed
  // Totals for the footer.
  std::uint64_t wrong_elems_ = 0;
  long points_ = 0, wrong_points_ = 0, skipped_points_ = 0, measured_ = 0, unchecked_ = 0;
  long noisy_ = 0, fell_back_ = 0;
  std::map<std::string, std::pair<double, long>> busbw_;  // "op/algo" -> (sum, points)
};

int terminal_width();  // COLUMNS when set and sane, else 132

}  // namespace collbench
