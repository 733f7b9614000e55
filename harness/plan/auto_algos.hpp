#pragma once
// What `--algo auto` runs at each size: the tuning file's choice (tuning.hpp) for the run's op,
// backend, device and node layout. The plan holds a placeholder entry named "auto"
// (auto_entry); per size, resolve() swaps it for a copy of the chosen algorithm's entry, still
// named "auto" and kept with its choice, so the point runners measure it like any algorithm
// and the record says `algo: "auto"`, `chosen`, `tuning` (file:line) and `tuning_match`.
#include <cstdint>
#include <deque>
#include <string>
#include <utility>

#include "collectives/registry.hpp"
#include "harness/plan/plan.hpp"
#include "collectives/formats/tuning.hpp"

namespace collbench {

inline constexpr const char* kAutoAlgo = "auto";

// The placeholder for --algo auto in a plan (never run itself).
const AlgoEntry& auto_entry(Op op);
bool has_auto(const std::vector<Block>& plan);

class AutoAlgos {
 public:
  AutoAlgos(Tuning tuning, const Registry& registry, std::string backend, std::string device, TunedLayout layout)
      : tuning_(std::move(tuning)),
        registry_(registry),
        backend_(std::move(backend)),
        device_(std::move(device)),
        layout_(std::move(layout)) {}
  // `b` with every auto placeholder replaced by the chosen algorithm's entry for `bytes`.
  CollectiveBlock resolve(const CollectiveBlock& b, std::uint64_t bytes);
  // The choice behind an entry resolve() made; null for any other entry.
  const TunedChoice* choice_of(const AlgoEntry& e) const;

 private:
  Tuning tuning_;
  const Registry& registry_;
  std::string backend_, device_;
  TunedLayout layout_;
  std::deque<std::pair<AlgoEntry, TunedChoice>> made_;  // stable addresses: blocks point at them
};

}  // namespace collbench
