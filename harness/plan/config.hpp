#pragma once
// The YAML sweep file (--config FILE.yaml): a whole sweep equivalent to command-line flags.
//
//   name: small
//   layouts: ["1x2", "2x2"]          # nodes x ranks per node, read by slurm/sweep.sh
//   defaults: {min_bytes: 8, max_bytes: 1M, dtype: [float32, int32], iters: 10}
//   cases:
//     - {op: allreduce, algo: all}
//     - {op: broadcast, algo: [naive, library], root: 1}
//
// `defaults` takes every setting by its long flag name (min_bytes or min-bytes) plus the
// run-wide backend, device, json and quiet; a case takes op (required), algo (default all)
// and any setting. Unknown keys, wrong types and bad values are errors naming FILE:LINE:COL.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/plan/run_config.hpp"

namespace collbench {

struct SweepFile {
  std::string name;
  std::vector<std::string> layouts;
  Settings defaults;  // built-in defaults with the file's `defaults:` applied
  std::optional<std::string> backend, device, json, tuning;
  std::optional<bool> quiet;
  std::vector<CaseSpec> cases;  // each: `defaults` with the case's overrides applied
};

// Reads and checks the file; throws UsageError ("FILE: cannot read ...", "FILE:L:C: ...").
SweepFile load_sweep_file(const std::string& path);
// The same from text; `filename` only labels messages.
SweepFile parse_sweep_yaml(const std::string& text, const std::string& filename);

}  // namespace collbench
