#include "harness/results/resume.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "collectives/op_traits.hpp"
#include "harness/results/records.hpp"
#include "harness/runtime/control.hpp"

namespace collbench {
namespace {

using plain_json = nlohmann::json;  // not report_json.cpp's ordered_json: its dump sorts keys,
                                    // so keys compare whatever the order

// The identity fields, in one order, as one string (the same for records and results).
std::string join_key(const plain_json& k) { return k.dump(); }

plain_json key_fields(const plain_json& r) {
  plain_json k = plain_json::array();
  for (std::string_view f : kPointIdentity) {  // collectives/op_traits.hpp
    const auto it = r.find(f);
    // "cache" is written on every record since --cache exists; older ones were all hot.
    k.push_back(it != r.end() ? *it : f == "cache" ? plain_json("hot") : plain_json());
  }
  return k;
}

bool counts_as_done(const plain_json& r) {
  if (r.value("skipped", false) == true) return true;
  const auto wrong = r.find("wrong");
  return wrong != r.end() && wrong->is_number_integer() && wrong->get<long long>() == 0;
}

std::string serialise(const std::set<std::string>& keys) {
  std::string s;
  for (const auto& k : keys) s += k + '\n';
  return s;
}

std::set<std::string> deserialise(const std::string& s) {
  std::set<std::string> keys;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) keys.insert(line);
  return keys;
}

}  // namespace

std::optional<std::string> record_key(const plain_json& r) {
  if (!r.is_object() || r.value("type", "") != "result" || r.value("schema", "") != kSchema) return std::nullopt;
  return join_key(key_fields(r));
}

std::string point_key(const PointResult& base) {
  // Through result_json, so the key can never drift from what is written to the file.
  const auto ordered = result_json(base, "");
  return join_key(key_fields(plain_json::parse(ordered.dump())));
}

std::set<std::string> read_done_points(const std::string& path, const std::function<void(const std::string&)>& warn) {
  std::set<std::string> done;
  std::ifstream in(path);
  if (!in) return done;
  long lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (line.empty()) continue;
    const plain_json r = plain_json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (r.is_discarded()) {
      warn(path + ":" + std::to_string(lineno) + ": not valid JSON (a truncated record?), ignored");
      continue;
    }
    if (auto k = record_key(r); k && counts_as_done(r)) done.insert(*k);
  }
  return done;
}

std::uint64_t drop_truncated_tail(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return 0;
  std::ifstream in(path, std::ios::binary);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  // Read backwards in blocks to the last '\n' (records are short: usually one block).
  constexpr std::uint64_t kBlock = 1 << 16;
  std::string buf;
  std::uint64_t end = size;
  while (end > 0) {
    const std::uint64_t start = end > kBlock ? end - kBlock : 0;
    buf.resize(end - start);
    in.seekg(static_cast<std::streamoff>(start));
    if (!in.read(buf.data(), static_cast<std::streamsize>(buf.size()))) return 0;
    const std::size_t nl = buf.rfind('\n');
    if (nl != std::string::npos) {
      end = start + nl + 1;
      break;
    }
    end = start;
  }
  if (end == size || ::truncate(path.c_str(), static_cast<off_t>(end)) != 0) return 0;
  return size - end;
}

ResumeSet::ResumeSet(Control& control, const std::string& path, bool speaker) {
  std::string keys;
  if (control.rank() == 0) {
    keys = serialise(read_done_points(path, [&](const std::string& w) {
      if (speaker) std::fprintf(stderr, "collbench: warning: --resume: %s\n", w.c_str());
    }));
  }
  keys_ = deserialise(control.broadcast(keys));
}

}  // namespace collbench
