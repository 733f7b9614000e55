#pragma once
// Summary statistics of timing samples. Pure functions, no MPI.
#include <span>

namespace collbench {

struct Stats {
  double min = 0, p5 = 0, p50 = 0, mean = 0, p95 = 0, p99 = 0, max = 0;
  double stdev = 0;  // sample standard deviation (divides by N-1); 0 for one sample
  long samples = 0;
};

// Percentile p in [0,100] of ascending-sorted samples by linear interpolation between the
// closest ranks (Hyndman & Fan type 7, numpy's default): h = (N-1)·p/100,
// value = x[floor h] + (h - floor h)·(x[floor h + 1] - x[floor h]). Requires N >= 1.
double percentile_sorted(std::span<const double> sorted, double p);

// All statistics of `samples` (any order). All zero when empty.
Stats summarize(std::span<const double> samples);

// Half-width of the 95% confidence interval of the mean, relative to the mean
// (1.96·stdev/√N / mean): the "noise" adaptive stopping compares with --max-noise.
// +infinity when it cannot be estimated (fewer than 2 samples or mean <= 0).
double relative_ci95(std::span<const double> samples);

}  // namespace collbench
