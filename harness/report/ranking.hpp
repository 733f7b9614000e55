#pragma once
// Which algorithm won a size, by how much, and whether the win is inside the noise: the one
// rule the terminal's "best" column and the analysis (collplot's answers, colltune's choices:
// analysis/collbench_analysis/tune.py, tie rule "spread") share. Pure; tests/harness/test_ranking.cpp.
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "harness/results/stats.hpp"

namespace collbench {

struct Ranking {
  std::size_t best = 0;                   // index of the lowest p50
  std::optional<std::size_t> runner_up;   // the second-lowest p50 (none: one candidate)
  double margin = 0;                      // runner_up p50 / best p50 - 1 (0 without a runner-up)
  bool tied = false;                      // the runner-up's p50 is within the best's p5-p95 spread (<= its p95)
};

struct Candidate {
  const Stats* time = nullptr;  // null: not measured (skipped)
  int simplicity_rank = 0;      // AlgoTraits: equal p50s go to the simpler, then to the name
  std::string_view name;
};

// Nothing when no candidate was measured.
std::optional<Ranking> rank_times(std::span<const Candidate> candidates);

// A point whose samples spread widely: p95 - p5 above kWideSpread x p50. Its p50 may sit anywhere
// in that range (a noisy neighbour, a descheduled rank), so a reader should not trust one such
// point against its neighbours (the table marks it).
inline constexpr double kWideSpread = 0.5;
bool wide_spread(const Stats& t);

}  // namespace collbench
