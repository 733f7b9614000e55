#pragma once
// One measured (or skipped) point, as a struct; report_json.cpp serialises it once and
// report_table.cpp prints it. Field meanings: results/README.md.
#include <cstdint>
#include <optional>
#include <string>

#include "harness/plan/run_config.hpp"
#include "harness/measure/stats.hpp"

namespace collbench {

struct PointResult {
  std::string op, algo, backend, device, dtype;
  std::optional<std::string> redop;  // reducing ops only
  std::optional<int> root;           // rooted ops only
  bool in_place = false;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;  // bytes / dtype size
  int world_size = 1, nodes = 1, ranks_per_node = 1;
  long iters = 0;  // timed operations
  int warmup = 0;
  TimingMode mode = TimingMode::per_iter;
  std::optional<Stats> time_us;  // absent when skipped
  std::optional<double> algbw_GBps, busbw_GBps;
  std::uint64_t wrong = 0;  // wrong elements over all ranks
  bool checked = false;     // verification ran (-c 1 and not skipped)
  bool skipped = false;
  std::optional<std::string> skip_reason;
  bool resumed = false;  // --resume: recorded by an earlier run, not measured (never written again)
  // Point-to-point (pingpong) records only: the pair and whether it stays within a node.
  std::optional<int> src, dst;
  std::optional<std::string> link;  // "intra" | "inter"
};

}  // namespace collbench
