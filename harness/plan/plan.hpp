#pragma once
// The sweep as a list of blocks, resolved from the RunConfig against the registry before
// anything is measured (so a misspelt algo fails in a second, not an hour into a sweep).
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "collectives/registry.hpp"
#include "harness/plan/p2p_method.hpp"
#include "harness/plan/run_config.hpp"
#include "harness/plan/sizes.hpp"
#include "harness/workload/buckets.hpp"
#include "harness/workload/model.hpp"
#include "harness/workload/profile.hpp"

namespace collbench {

// One table of collectives: an op at one dtype/redop/root/placement, with the algorithms
// compared in it. Measured by collective_point.cpp.
struct CollectiveBlock {
  Op op = Op::allreduce;
  std::vector<const AlgoEntry*> algos;
  DType dtype = DType::float32;
  std::optional<RedOp> redop;  // reducing ops only
  std::optional<int> root;     // rooted ops only
  bool in_place = false;
  Settings settings;
  // Blocks with the same table are one op/dtype/redop/root of one case at its placements
  // (--inplace both): measured size by size together and shown side by side, as nccl-tests does.
  std::size_t table = 0;
};

// One point-to-point method (`--op pingpong`, the method chosen by --algo) over the selected
// rank pairs, on raw bytes. Measured by p2p_point.cpp.
struct P2pBlock {
  P2pMethod method = P2pMethod::latency;
  Settings settings;
};

// A DDP training step's gradient synchronisation (--workload ddp): the model's buckets as
// PyTorch DDP makes them, each all-reduced back to back per step by every algorithm of the
// block. One "point" per block. Measured by ddp_point.cpp.
// DDP's first bucket cap (torch.distributed._DEFAULT_FIRST_BUCKET_BYTES).
constexpr std::uint64_t kDdpFirstBucketBytes = 1 << 20;
struct DdpBlock {
  std::vector<const AlgoEntry*> algos;
  workload::Model model;
  std::vector<workload::Bucket> buckets;  // in gradient-ready order, one dtype each
  RedOp redop = RedOp::sum;
  Settings settings;
  std::optional<workload::ComputeProfile> profile;  // --compute-profile
  std::uint64_t grad_bytes() const;
};

// The sweep is a sequence of blocks of these kinds, each with its own point runner.
using Block = std::variant<CollectiveBlock, P2pBlock, DdpBlock>;

inline const Settings& settings_of(const Block& b) {
  return std::visit([](const auto& k) -> const Settings& { return k.settings; }, b);
}

// Throws UsageError for an algo that does not exist for an op on the backend (listing the
// valid ones), or an op with no algorithm at all.
std::vector<Block> make_plan(const RunConfig& cfg, const Registry& registry);

// Every registry entry the plan of `cfg` can measure (each once, in plan order): what the run
// record's `algorithms` lists with its traits. Not `auto` (not an entry: it runs what the tuning
// file names) nor pingpong's methods. Throws UsageError as make_plan does for an unknown algo.
std::vector<const AlgoEntry*> planned_algorithms(const RunConfig& cfg, const Registry& registry);

// The plan cut into tables, in order: [first, last) of consecutive blocks shown as one table
// (a collective block's placements; every other block alone).
struct TableRange {
  std::size_t first = 0, last = 0;
};
std::vector<TableRange> table_ranges(const std::vector<Block>& plan);

// The sizes a block measures on `world_size` ranks (a pingpong message is raw bytes).
std::vector<SizePoint> block_sizes(const Block& b, int world_size);

// Throws UsageError when a block's root is outside [0, world_size), or a pingpong block's
// pairs do not fit the world.
void check_plan_for_world(const std::vector<Block>& plan, int world_size);

}  // namespace collbench
