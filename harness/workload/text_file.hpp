#pragma once
// Reading a small input file whole (model, ready order, compute profile), with the one-line
// errors every collbench input gives: "<what> PATH: cannot read (why)".
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "collectives/core/error.hpp"

namespace collbench::workload {

inline std::string read_text_file(const std::string& path, const std::string& what) {
  const auto fail = [&](const std::string& why) { throw UsageError(what + " " + path + ": cannot read (" + why + ")"); };
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail("no such file");
  if (!std::filesystem::is_regular_file(path, ec)) fail("not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) fail(std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) fail("I/O error");
  return bytes.str();
}

}  // namespace collbench::workload
