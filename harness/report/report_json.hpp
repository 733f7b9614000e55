#pragma once
// JSON Lines results (schema "collbench/1", documented in results/README.md): records are
// structs serialised once with nlohmann/json. Rank 0 writes; every line is flushed when its
// point finishes, so a killed run keeps everything measured before it died.
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/report/result.hpp"
#include "harness/plan/run_config.hpp"
#include "harness/report/bandwidth.hpp"
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

// A JSON Lines file opened for append (or truncated with --overwrite). Opening is the
// writability check, done before anything is measured.
//
// Each record is one write(2) of the whole line (no stdio buffer, so nothing is left to flush
// later): a full disk or an I/O error is seen at the record it hits. A short or failed write
// is undone (ftruncate back to the record's start), so the file never holds part of a record,
// and write() throws ResultsWriteError naming the file and the OS error. Writes are
// serialised by a mutex: the watchdog thread may write the final `end` record of a rank that
// is about to _exit while the main thread is blocked in MPI.
class JsonlWriter {
 public:
  // Throws UsageError naming the path when it cannot be opened for writing.
  JsonlWriter(const std::string& path, bool overwrite);
  ~JsonlWriter();
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;

  void write(const nlohmann::ordered_json& record);  // one line, on disk when it returns
  // Removes the file if this writer created it and wrote nothing (a run that failed before
  // measuring must not leave an empty file behind).
  void discard_if_unused();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;  // where the next record starts (only this writer appends)
  bool created_ = false;
  bool written_ = false;
  std::mutex mutex_;
};

// A results file that is not ours, or is corrupt before its last line, is refused before
// anything is appended: the first line that is not a collbench/1 record ("FILE:LINE: why"),
// or nothing when every line is one (a missing or empty file too). A last line without '\n'
// is a record cut by a kill, not corruption (drop_truncated_tail removes it).
std::optional<std::string> foreign_line(const std::string& path);

}  // namespace collbench
