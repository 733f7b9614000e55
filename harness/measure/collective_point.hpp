#pragma once
// Measuring one size of a block: every algorithm's skip checks, warm-up, timing (one after
// the other, or interleaved) and verification, giving one PointResult per algorithm.
#include <string>
#include <vector>

#include "harness/results/bandwidth.hpp"
#include "harness/measure/measure.hpp"
#include "harness/plan/auto_algos.hpp"
#include "harness/plan/plan.hpp"
#include "harness/plan/sizes.hpp"
#include "harness/results/result.hpp"
#include "collectives/backends/backend.hpp"
#include "harness/runtime/topology.hpp"

namespace collbench {

class Control;
class Transport;
class CallDecorator;

// What stays the same for every point of a run.
struct PointEnv {
  Transport& transport;
  Control& control;
  const Topology& topology;
  std::string backend;
  std::string device;
  bool quiet = false;  // no per-rank notes about wrong elements on stderr
  const Backend* owner = nullptr;  // the backend behind `transport` (device memory budget); may be null in tests
  const CallDecorator* around_calls = nullptr;  // wraps every collective call (test faults only); null: none
  AutoAlgos* autos = nullptr;        // --algo auto: the tuning file's choices (null: no auto in the plan)
  double barrier_us = 0;             // the run's calibrated empty barrier (0: unknown; see timing_spec)
  const LinkRates* links = nullptr;  // the run's calibrated link rates (efficiency); null: not measured
  // --cache cold: the last-level cache its pools exceed (the largest over ranks) and where the
  // number came from (runtime/cache_pool.hpp).
  std::uint64_t llc_bytes = 0;
  std::string llc_source = "";
};

// Collective over all ranks; all ranks return the same results.
std::vector<PointResult> measure_size(PointEnv& env, const CollectiveBlock& block, const SizePoint& size);

// The record of (block, algo, size) before anything is measured: its identity fields only.
PointResult base_result(const PointEnv& env, const CollectiveBlock& block, const AlgoEntry& algo, const SizePoint& size);

// The fields every kind of point fills the same way (what, where, how big, how timed); each
// kind's base_result adds its own (redop/root/in_place, or src/dst/link).
PointResult identity_result(const PointEnv& env, std::string_view op, std::string_view algo, DType dtype,
                            const SizePoint& size, int warmup, TimingMode mode);

// Shared by the point runners (collectives, DDP steps).
void skip(PointResult& r, const std::string& why);
void record_timing(PointResult& r, const Timing& t, Op op);
// Warm-up that turns a NotSupported (on every rank alike) into a skip reason.
std::optional<std::string> warm_up_or_skip(PointEnv& env, Workload& w, const TimingSpec& spec);

// "allreduce/ring 1048576B": the point's name in NVTX ranges and messages.
std::string point_label(const CollectiveBlock& block, const AlgoEntry& algo, std::uint64_t bytes);

}  // namespace collbench
