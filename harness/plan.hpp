#pragma once
// The sweep as a list of blocks, resolved from the RunConfig against the registry before
// anything is measured (so a misspelt algo fails in a second, not an hour into a sweep).
#include <optional>
#include <string>
#include <vector>

#include "collectives/registry.hpp"
#include "harness/p2p_method.hpp"
#include "harness/run_config.hpp"

namespace collbench {

// One table: an op at one dtype/redop/root/placement, with the algorithms compared in it;
// or (p2p set) one pingpong method over the selected rank pairs (op, algos unused).
struct Block {
  Op op = Op::allreduce;
  std::vector<const AlgoEntry*> algos;
  DType dtype = DType::float32;
  std::optional<RedOp> redop;  // reducing ops only
  std::optional<int> root;     // rooted ops only
  bool in_place = false;
  Settings settings;
  std::optional<P2pMethod> p2p;  // last, so the aggregate initialisers above stay valid
};

// Throws UsageError for an algo that does not exist for an op on the backend (listing the
// valid ones), or an op with no algorithm at all.
std::vector<Block> make_plan(const RunConfig& cfg, const Registry& registry);

// Throws UsageError when a block's root is outside [0, world_size), or a pingpong block's
// pairs do not fit the world.
void check_plan_for_world(const std::vector<Block>& plan, int world_size);

}  // namespace collbench
