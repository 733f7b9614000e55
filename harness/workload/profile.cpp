#include "harness/workload/profile.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <numeric>
#include <optional>

#include "collectives/core/error.hpp"
#include "harness/workload/text_file.hpp"

namespace collbench::workload {
namespace {

constexpr const char* kProfileAccepted =
    "accepted: forward_ms, optimizer_ms (numbers >= 0) and backward_ms (module name -> ms), e.g. "
    "{forward_ms: 60, optimizer_ms: 10, backward_ms: {fc: 0.4, layer4: 21}}";

[[noreturn]] void fail(const std::string& path, const YAML::Mark& at, const std::string& why) {
  const std::string line = at.line >= 0 ? "line " + std::to_string(at.line + 1) + ": " : "";
  throw UsageError("compute profile " + path + ": " + line + why);
}

double milliseconds(const std::string& path, const YAML::Node& v, const std::string& key) {
  double ms = -1;
  try {
    ms = v.as<double>();
  } catch (const YAML::Exception&) {
    fail(path, v.Mark(), "'" + key + "' is not a number");
  }
  if (!std::isfinite(ms) || ms < 0) fail(path, v.Mark(), "'" + key + "' is " + v.Scalar() + "; accepted: a number >= 0");
  return ms;
}

bool covers(const std::string& prefix, const std::string& name) {
  return name == prefix || (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
                            name[prefix.size()] == '.');
}

}  // namespace

double ComputeProfile::backward_ms() const {
  return std::accumulate(param_backward_ms.begin(), param_backward_ms.end(), 0.0);
}

ComputeProfile parse_compute_profile(const std::string& text, const std::string& path, const Model& m) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail(path, e.mark, e.msg);
  }
  if (!root.IsMap()) fail(path, root.Mark(), std::string("not a mapping; ") + kProfileAccepted);
  ComputeProfile p;
  std::optional<YAML::Node> backward;
  bool forward = false, optimizer = false;
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (key == "forward_ms") {
      p.forward_ms = milliseconds(path, kv.second, key);
      forward = true;
    } else if (key == "optimizer_ms") {
      p.optimizer_ms = milliseconds(path, kv.second, key);
      optimizer = true;
    } else if (key == "backward_ms") {
      backward = kv.second;
    } else {
      fail(path, kv.first.Mark(), "unknown key '" + key + "'; " + kProfileAccepted);
    }
  }
  if (!forward || !optimizer || !backward) fail(path, root.Mark(), std::string("missing a key; ") + kProfileAccepted);
  if (!backward->IsMap() || backward->size() == 0)
    fail(path, backward->Mark(), "'backward_ms' is not a mapping of module names to ms");
  // Each parameter's entry: the longest covering prefix.
  struct Entry {
    std::string prefix;
    double ms;
    YAML::Mark at;
    std::uint64_t bytes = 0;
    std::size_t params = 0;
  };
  std::vector<Entry> entries;
  for (const auto& kv : *backward)
    entries.push_back({kv.first.Scalar(), milliseconds(path, kv.second, "backward_ms." + kv.first.Scalar()), kv.first.Mark()});
  std::vector<std::size_t> owner(m.params.size());
  for (std::size_t i = 0; i < m.params.size(); ++i) {
    std::optional<std::size_t> best;
    for (std::size_t e = 0; e < entries.size(); ++e)
      if (covers(entries[e].prefix, m.params[i].name) && (!best || entries[e].prefix.size() > entries[*best].prefix.size()))
        best = e;
    if (!best)
      fail(path, backward->Mark(), "parameter '" + m.params[i].name + "' of " + m.name + " is covered by no backward_ms entry");
    owner[i] = *best;
    ++entries[*best].params;
    entries[*best].bytes += static_cast<std::uint64_t>(m.params[i].numel()) * dtype_size(m.params[i].dtype);
  }
  for (const Entry& e : entries)
    if (e.params == 0) fail(path, e.at, "'" + e.prefix + "' covers no parameter of " + m.name);
  p.param_backward_ms.resize(m.params.size());
  for (std::size_t i = 0; i < m.params.size(); ++i) {
    const Entry& e = entries[owner[i]];
    const double bytes = static_cast<double>(m.params[i].numel()) * static_cast<double>(dtype_size(m.params[i].dtype));
    p.param_backward_ms[i] = e.bytes ? e.ms * bytes / static_cast<double>(e.bytes) : 0.0;
  }
  return p;
}

ComputeProfile load_compute_profile(const std::string& path, const Model& m) {
  return parse_compute_profile(read_text_file(path, "compute profile"), path, m);
}

}  // namespace collbench::workload
