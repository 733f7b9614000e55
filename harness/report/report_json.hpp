#pragma once
// The JSON Lines printer: rank 0 appends the records of results/records.hpp; every line is on
// disk when its point finishes, so a killed run keeps everything measured before it died.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/results/records.hpp"

namespace collbench {

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
