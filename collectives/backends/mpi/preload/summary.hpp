#pragma once
// The preload's counts and its report at MPI_Finalize (docs/preload.md "The summary"): per op and
// "served by" (an algorithm, or the library and why) the calls, bytes and seconds, summed over
// ranks and printed by rank 0 where COLLBENCH_PMPI_SUMMARY asks; and the MPI_ collectives that
// reached this library while it served one (re-entries, a collbench bug), named on stderr.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectives/backends/mpi/preload/preload.hpp"

namespace collbench::preload {

class Summary {
 public:
  // `where`: "": none; "stderr"; else a file path (rank 0's COLLBENCH_PMPI_SUMMARY).
  explicit Summary(std::string where) : where_(std::move(where)) {}

  // Whether calls are timed and counted (a summary was asked for).
  bool on() const { return !where_.empty(); }
  void record(Op op, std::string_view by, std::string_view why, std::uint64_t bytes, double seconds);
  void reentered() { ++reentered_; }
  // MPI_Finalize's wrapper: the summary (collective over MPI_COMM_WORLD when on; `tuning` names
  // the tuning file in its head), then the re-entries, if any, on stderr.
  void report(const std::string& tuning);

 private:
  // One row: calls of one op served one way.
  struct Row {
    std::string by;   // the algorithm, or "library"
    std::string why;  // library: why ("" when the tuning file chose it)
    std::uint64_t calls = 0, bytes = 0;
    double seconds = 0;
  };
  void print(const std::string& tuning);

  std::string where_;
  std::uint64_t reentered_ = 0;
  std::vector<Row> rows_[kOps];
};

}  // namespace collbench::preload
