#pragma once
// `--expect FILE`: the acceptance gate's references (schema collbench-expect/1, documented in
// results/README.md "Expectation files"). Each entry names points (op, algo, layout, a size or
// size range, optionally dtype and placement) and a minimum busbw or a maximum p50 time, with a
// tolerance; collbench then checks every measured point against every entry naming it and
// exits ExitStatus::below_expectation when one falls short. Pure: parsed from the file's text; every
// problem is a UsageError naming FILE:LINE, raised before anything is measured.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/formats/tuning.hpp"

namespace collbench {


struct ExpectEntry {
  std::string op;                    // a collective op or "pingpong"
  std::string algo;                  // an algorithm (pingpong: a method) or "any"
  std::optional<TunedLayout> layout;  // none: any layout
  std::uint64_t min_bytes = 0;
  std::optional<std::uint64_t> max_bytes;  // none: unbounded
  std::optional<std::string> dtype;        // none: any
  std::optional<bool> in_place;            // none: either placement
  // Exactly one of the two references.
  std::optional<double> min_busbw_GBps;
  std::optional<double> max_time_us;  // of time_us.p50
  double tolerance = 0;               // fraction: pass at >= (1 - tol) x min busbw, or <= (1 + tol) x max time
  int line = 0;
};

// One (point, entry) check.
struct ExpectVerdict {
  const ExpectEntry* entry = nullptr;
  std::string metric;                // "busbw_GBps" or "time_us"
  std::optional<double> measured;    // null: the point was skipped
  double limit = 0;                  // the reference with the tolerance applied
  bool pass = false;
};

class Expectations {
 public:
  // Throws UsageError ("expectation file PATH:LINE: why; accepted: ...") on anything invalid:
  // not YAML, an unknown key, a wrong type, an unknown op or algo (for `algo_known`), a
  // negative number, no reference or two, no entries.
  static Expectations parse(const std::string& text, const std::string& path);
  // The file's bytes; throws UsageError naming the file.
  static Expectations load(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<ExpectEntry>& entries() const { return entries_; }

 private:
  std::string path_;
  std::vector<ExpectEntry> entries_;
};

}  // namespace collbench
