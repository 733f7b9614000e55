#pragma once
// The results model's records and their one serialisation (schema "collbench/1", documented in
// results/README.md): the run record, each point's result record, the end record, as structs,
// serialised once with nlohmann/json. The JSON Lines writer (report/report_json.hpp) writes
// these; --resume's point keys (resume.hpp) are read from the same serialisation, so a key can
// never drift from what the file holds.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/registry.hpp"
#include "harness/plan/run_config.hpp"
#include "harness/results/bandwidth.hpp"
#include "harness/results/result.hpp"
#include "harness/runtime/provenance.hpp"
#include "harness/runtime/topology.hpp"

namespace collbench {

inline constexpr const char* kSchema = "collbench/1";

struct RunRecord {
  std::string run_id;
  std::vector<std::string> argv;
  std::string start_time;
  Topology topology;
  std::string backend, device;
  Versions versions;
  std::optional<std::map<std::string, std::string>> slurm;
  const RunConfig* config = nullptr;
  std::optional<Calibration> calibration;
  // What the launcher says of the link between nodes (COLLBENCH_INTER_NODE_LINK), e.g. that it
  // is emulated: plots and reports carry it beside multi-node results.
  std::optional<std::string> inter_node_link;
  // Provenance: each node's hardware (hwloc) and each rank's core binding (runtime/provenance.hpp).
  std::optional<Provenance> provenance;
  // The link rates every point's efficiency is judged against (measure/p2p_point.hpp
  // calibrate_links); absent when the run measures no collective.
  std::optional<LinkRates> links;
  // The load on rank 0's node when the run started (/proc/loadavg: 1, 5, 15 min; nullopt when
  // unreadable) and its online CPUs: a load above them means the timed ranks shared CPUs.
  std::optional<std::array<double, 3>> loadavg;
  int online_cpus = 0;
};

struct EndRecord {
  std::string run_id;
  std::string end_time;
  int exit_status = 0;
  long points = 0;
  long wrong_points = 0;
  long skipped_points = 0;
  std::uint64_t peak_rss_bytes = 0;  // max over ranks of each process's peak resident memory
  // --expect: the gate's file and counts of (point, entry) checks (absent without --expect).
  struct Expect {
    std::string file;
    long checked = 0, failed = 0;
  };
  std::optional<Expect> expect;
  std::optional<std::array<double, 3>> loadavg;  // rank 0's node at the end (as RunRecord::loadavg)
};

nlohmann::ordered_json config_json(const RunConfig& cfg);
nlohmann::ordered_json run_json(const RunRecord& r);
// --per-rank: the rank x sample matrices are written when they hold at most this many values
// each (64 ranks x 1024 samples); larger points keep the per-rank summary only.
inline constexpr std::size_t kPerRankMaxValues = 65536;
// `keep_samples`: write samples_us when the point has at most this many samples (0: never).
nlohmann::ordered_json result_json(const PointResult& r, const std::string& run_id, long keep_samples = 0);
nlohmann::ordered_json end_json(const EndRecord& e);

std::string utc_now_iso8601();   // "2026-11-22T07:40:00Z"
std::string random_run_id();     // 16 hex digits

// One entry as the run record's `algorithms` and `--list --json` write it: op, algo, backend,
// (with_text: description, requirements,) traits {node_aware, peer_memory, library,
// simplicity_rank}.
nlohmann::ordered_json algorithm_json(const AlgoEntry& e, bool with_text = false);
nlohmann::ordered_json algorithms_json(const std::vector<const AlgoEntry*>& entries, bool with_text = false);

}  // namespace collbench
