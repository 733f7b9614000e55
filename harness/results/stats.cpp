#include "harness/results/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace collbench {
namespace {

double mean_of(std::span<const double> x) { return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size()); }

double stdev_of(std::span<const double> x, double mean) {
  if (x.size() < 2) return 0;
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

}  // namespace

double percentile_sorted(std::span<const double> sorted, double p) {
  const double h = (static_cast<double>(sorted.size()) - 1) * p / 100.0;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

Stats summarize(std::span<const double> samples) {
  Stats s;
  if (samples.empty()) return s;
  std::vector<double> x(samples.begin(), samples.end());
  std::sort(x.begin(), x.end());
  s.samples = static_cast<long>(x.size());
  s.min = x.front();
  s.max = x.back();
  s.p5 = percentile_sorted(x, 5);
  s.p50 = percentile_sorted(x, 50);
  s.p95 = percentile_sorted(x, 95);
  s.p99 = percentile_sorted(x, 99);
  s.mean = mean_of(x);
  s.stdev = stdev_of(x, s.mean);
  return s;
}

double relative_ci95(std::span<const double> samples) {
  if (samples.size() < 2) return std::numeric_limits<double>::infinity();
  const double m = mean_of(samples);
  if (!(m > 0)) return std::numeric_limits<double>::infinity();
  return 1.96 * stdev_of(samples, m) / std::sqrt(static_cast<double>(samples.size())) / m;
}

}  // namespace collbench
