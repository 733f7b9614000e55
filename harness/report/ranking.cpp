#include "harness/report/ranking.hpp"

namespace collbench {

namespace {

bool faster(const Candidate& a, const Candidate& b) {
  if (a.time->p50 != b.time->p50) return a.time->p50 < b.time->p50;
  if (a.simplicity_rank != b.simplicity_rank) return a.simplicity_rank < b.simplicity_rank;
  return a.name < b.name;
}

}  // namespace

std::optional<Ranking> rank_times(std::span<const Candidate> c) {
  std::optional<std::size_t> best, second;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!c[i].time) continue;
    if (!best || faster(c[i], c[*best])) {
      second = best;
      best = i;
    } else if (!second || faster(c[i], c[*second])) {
      second = i;
    }
  }
  if (!best) return std::nullopt;
  Ranking r{*best, second, 0, false};
  if (second) {
    const double b = c[*best].time->p50, s = c[*second].time->p50;
    r.margin = b > 0 ? s / b - 1 : 0;
    r.tied = s <= c[*best].time->p95;
  }
  return r;
}

bool wide_spread(const Stats& t) { return t.p95 - t.p5 > kWideSpread * t.p50; }

}  // namespace collbench
