#pragma once
// --resume: do not measure again what the --json file already holds for this configuration.
//
// A point's key is what was measured, not how long: the record's kPointIdentity fields
// (collectives/op_traits.hpp: op, algo, backend, device, dtype, redop, root, in_place, bytes,
// world_size, nodes, ranks_per_node, mode, and src/dst for p2p). iters/warmup/timeout are
// not part of it (adaptive runs vary iters), so changing -n alone does not re-measure.
// A recorded point counts as done when it was measured with wrong == 0, or skipped (a skip
// is a property of the configuration and would repeat). A point with wrong > 0 is measured
// again; its old record stays, and the newer one follows it in the file.
//
// Rank 0 reads the file and broadcasts the keys. Lines that are not valid JSON are ignored
// with a warning (a run killed mid-write leaves a truncated last line).
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/plan/plan.hpp"
#include "harness/results/result.hpp"
#include "harness/plan/sizes.hpp"

namespace collbench {

class Control;

// The key of a record (null when it is not a collbench/1 result record).
std::optional<std::string> record_key(const nlohmann::json& record);
// The key the point (block, algo, size) will have, computed before measuring it.
std::string point_key(const PointResult& base);

// Keys of the points done in `path` (missing file: none). `warn` gets one line per problem.
std::set<std::string> read_done_points(const std::string& path, const std::function<void(const std::string&)>& warn);

// A file that does not end with '\n' ends with a record cut by a kill: removes that fragment
// (it is not a record) so appended lines start on a line of their own. Returns bytes removed.
std::uint64_t drop_truncated_tail(const std::string& path);

class ResumeSet {
 public:
  ResumeSet() = default;  // nothing recorded: measure everything
  // Collective: rank 0 reads `path`, every rank gets the keys.
  ResumeSet(Control& control, const std::string& path, bool speaker);
  bool done(const PointResult& base) const { return keys_.count(point_key(base)) > 0; }
  std::size_t size() const { return keys_.size(); }

 private:
  std::set<std::string> keys_;
};

}  // namespace collbench
