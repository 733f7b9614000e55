#pragma once
// The acceptance gate (--expect FILE) on rank 0: every measured point checked against every
// expectation entry naming it (plan/expect.hpp), a table of the checks after the run's footer,
// and the points below their reference named in one line. The run's exit status becomes
// ExitStatus::below_expectation (exit_status.hpp) when any check failed (and nothing worse happened).
#include <cstdio>
#include <string>
#include <vector>

#include "harness/plan/expect.hpp"
#include "harness/results/result.hpp"

namespace collbench {

// Every entry of `x` naming `r` (measured on a run of `layout`), in file order, checked.
// Workload (DDP) records are never named.
std::vector<ExpectVerdict> check_expectations(const Expectations& x, const PointResult& r, const TunedLayout& layout);

class Gate {
 public:
  Gate(const Expectations& x, TunedLayout layout) : x_(x), layout_(std::move(layout)) {}

  void add(const PointResult& r);  // a measured (or skipped) point of this run
  long checked() const { return static_cast<long>(rows_.size()); }
  long failed() const;
  // The checks, one row each: point, metric, measured, reference, tolerance, limit, verdict,
  // the entry's FILE:LINE; then the entries that named no point of this run.
  void print(std::FILE* out) const;
  // "allreduce/ring 1x4 float32 16M busbw 1.20 < 1.80 GB/s, ..." (every failed check).
  std::string failures() const;
  const std::string& path() const { return x_.path(); }

 private:
  struct Row {
    std::string point;  // "allreduce/ring 1x4 float32 1048576B"
    ExpectVerdict v;
  };
  const Expectations& x_;
  TunedLayout layout_;
  std::vector<Row> rows_;
};

}  // namespace collbench
