#include "harness/report/report_json.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "collectives/core/error.hpp"

namespace collbench {

JsonlWriter::JsonlWriter(const std::string& path, bool overwrite) : path_(path) {
  struct stat st {};
  const bool existed = ::stat(path.c_str(), &st) == 0;
  if (existed && S_ISDIR(st.st_mode))
    throw UsageError("--json " + path + ": is a directory; accepted: a writable file path");
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (overwrite ? O_TRUNC : 0), 0644);
  if (fd_ < 0)
    throw UsageError("--json " + path + ": cannot open for writing (" + std::strerror(errno) +
                     "); accepted: a writable file path");
  const off_t end = ::lseek(fd_, 0, SEEK_END);
  size_ = end > 0 ? static_cast<std::uint64_t>(end) : 0;
  created_ = !existed;
}

JsonlWriter::~JsonlWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void JsonlWriter::write(const nlohmann::ordered_json& record) {
  const std::string line = record.dump() + "\n";
  std::lock_guard lock(mutex_);
  if (fd_ < 0) throw ResultsWriteError("--json " + path_ + ": the file was closed after an earlier write error");
  // One call per record; a regular file returns short only when the disk is full or on a
  // signal, and a record must never be left half written, so any shortfall is undone.
  ssize_t n;
  do n = ::write(fd_, line.data(), line.size());
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(line.size())) {
    size_ += line.size();
    written_ = true;
    return;
  }
  const int err = n < 0 ? errno : ENOSPC;  // a short write: the space ran out mid-record
  std::string msg = "--json " + path_ + ": writing a " + record.value("type", std::string("")) + " record failed (" +
                    std::strerror(err) + ")";
  if (n > 0 && ::ftruncate(fd_, static_cast<off_t>(size_)) != 0)
    msg += "; could not remove the partial record (" + std::string(std::strerror(errno)) + ")";
  else
    msg += "; the records written before it are kept";
  ::close(fd_);
  fd_ = -1;
  throw ResultsWriteError(msg);
}

void JsonlWriter::discard_if_unused() {
  std::lock_guard lock(mutex_);
  if (!created_ || written_ || fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  std::remove(path_.c_str());
}

std::optional<std::string> foreign_line(const std::string& path) {
  // Only a regular file holds records to check: reading /dev/stdout or a FIFO would block.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  long lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (in.eof()) break;  // no '\n' after it: a record cut by a kill, removed before appending
    const auto where = [&](const std::string& why) { return path + ":" + std::to_string(lineno) + ": " + why; };
    if (line.empty()) continue;  // blank lines are skipped by every reader
    const nlohmann::json r = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (r.is_discarded()) return where("not valid JSON");
    const auto field = [&](const char* k) {
      const auto it = r.is_object() ? r.find(k) : r.end();
      return it != r.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (field("schema") != kSchema) return where(std::string("not a ") + kSchema + " record");
    const std::string type = field("type");
    if (type != "run" && type != "result" && type != "workload" && type != "end")
      return where("record type '" + type + "' is not run, result, workload or end");
  }
  return std::nullopt;
}

}  // namespace collbench
