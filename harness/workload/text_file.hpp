#pragma once
// Reading a small input file whole (model, ready order, compute profile), with the one-line
// errors every collbench input gives: "<what> PATH: cannot read (why)"; and where in it a JSON
// parse error is, in those errors' words.
#include <algorithm>
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

// nlohmann reports a parse error's byte offset (1-based, the last character read); messages
// want a line.
inline int line_of_byte(const std::string& text, std::size_t byte) {
  const std::size_t end = std::min(byte == 0 ? 0 : byte - 1, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
}

// A nlohmann::json::parse_error's what(), "[json.exception.parse_error.101] parse error at line 3,
// column 1: syntax error ...", without its prefix: "syntax error ...".
inline std::string json_parse_reason(const std::string& what) {
  const std::size_t pe = what.find("parse error");
  const std::size_t colon = pe == std::string::npos ? std::string::npos : what.find(": ", pe);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace collbench::workload
