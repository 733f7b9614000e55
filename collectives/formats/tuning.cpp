#include "collectives/formats/tuning.hpp"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdint>
#include <limits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>
#include <tuple>

#include "collectives/collective.hpp"
#include "collectives/core/error.hpp"
#include "collectives/formats/yaml_types.hpp"

namespace collbench {

int TunedLayout::world_size() const { return std::accumulate(ranks_per_node.begin(), ranks_per_node.end(), 0); }

std::string TunedLayout::label() const {
  bool even = true;
  for (int k : ranks_per_node) even = even && k == ranks_per_node.front();
  if (even && !ranks_per_node.empty()) return std::to_string(nodes()) + "x" + std::to_string(ranks_per_node.front());
  std::string s = "[";
  for (std::size_t i = 0; i < ranks_per_node.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks_per_node[i]);
  return s + "]";
}

namespace {

[[noreturn]] void bad(const std::string& path, const YAML::Node& at, const std::string& what) {
  const int line = at.Mark().line >= 0 ? at.Mark().line + 1 : 0;
  throw UsageError("tuning file " + path + (line ? ":" + std::to_string(line) : "") + ": " + what +
                   "; accepted: a collbench-tuning/1 file written by colltune (results/README.md)");
}

YAML::Node need(const std::string& path, const YAML::Node& map, const char* key) {
  if (!map.IsMap() || !map[key]) bad(path, map, std::string("missing '") + key + "'");
  return map[key];
}

// Types as the schema (results/schema/collbench-tuning-1.json) sees the file once loaded (yaml_types.hpp).
std::string name(const std::string& path, const YAML::Node& n, const std::string& what) {
  const YamlType t = yaml_type(n);
  if (t != YamlType::string) bad(path, n, what + " is " + yaml_type_words(t) + ", not a name");
  if (n.Scalar().find_first_not_of(" \t") == std::string::npos) bad(path, n, what + " is blank");
  return n.Scalar();
}

// Ranks, nodes: at most kMaxRanks (as --ranks), so a layout is never larger than a run can be.
constexpr std::int64_t kMaxRanks = 1 << 20;

std::int64_t integer(const std::string& path, const YAML::Node& n, const std::string& what, std::int64_t min,
                     std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
  const std::optional<std::int64_t> v = yaml_integer(n);
  if (!v) bad(path, n, what + " is " + yaml_type_words(yaml_type(n)) + ", not an integer");
  if (*v < min || *v > max)
    bad(path, n, what + " " + std::to_string(*v) + " is out of range (" + std::to_string(min) + " to " +
                     std::to_string(max) + ")");
  return *v;
}

TunedLayout layout_of(const std::string& path, const YAML::Node& n) {
  if (!n.IsMap()) bad(path, n, "layout is not a mapping {nodes, ranks_per_node, world_size}");
  const YAML::Node rpn = need(path, n, "ranks_per_node");
  const auto nodes = static_cast<int>(integer(path, need(path, n, "nodes"), "layout.nodes", 1, kMaxRanks));
  const auto world = integer(path, need(path, n, "world_size"), "layout.world_size", 1, kMaxRanks);
  TunedLayout l;
  if (rpn.IsSequence()) {
    if (rpn.size() == 0 || rpn.size() > static_cast<std::size_t>(kMaxRanks))
      bad(path, rpn, "layout.ranks_per_node is an empty list, or longer than " + std::to_string(kMaxRanks));
    for (const auto& k : rpn)
      l.ranks_per_node.push_back(static_cast<int>(integer(path, k, "layout.ranks_per_node", 1, kMaxRanks)));
  } else {
    const auto k = static_cast<int>(integer(path, rpn, "layout.ranks_per_node", 1, kMaxRanks));
    l.ranks_per_node.assign(static_cast<std::size_t>(nodes), k);
  }
  if (l.nodes() != nodes || l.world_size() != world)
    bad(path, n, "layout.ranks_per_node does not fit nodes " + std::to_string(nodes) + " and world_size " +
                     std::to_string(world));
  return l;
}

}  // namespace

std::string read_tuning_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  if (in.is_open()) bytes << in.rdbuf();
  if (!in.is_open() || in.bad())
    throw UsageError("--tuning " + path + ": cannot read (" + std::strerror(errno) +
                     "); accepted: a readable tuning file written by colltune");
  return bytes.str();
}

Tuning Tuning::parse(const std::string& text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw UsageError("tuning file " + path + ":" + std::to_string(e.mark.line + 1) + ": not YAML (" + e.msg + ")");
  }
  if (!root.IsMap()) bad(path, root, "not a mapping");
  const YAML::Node schema = need(path, root, "schema");
  if (yaml_type(schema) != YamlType::string || schema.Scalar() != "collbench-tuning/1")
    bad(path, schema, "schema is not collbench-tuning/1");
  Tuning t;
  t.path_ = path;
  const YAML::Node entries = need(path, root, "entries");
  if (!entries.IsSequence() || entries.size() == 0) bad(path, entries, "entries is not a non-empty list");
  for (const auto& e : entries) {
    if (!e.IsMap()) bad(path, e, "an entry is not a mapping {op, backend, device, layout, ranges}");
    const std::string op_text = name(path, need(path, e, "op"), "op");
    const auto op = parse_op(op_text);
    if (!op) bad(path, e["op"], "unknown op '" + op_text + "'");
    Entry entry{*op, name(path, need(path, e, "backend"), "backend"), name(path, need(path, e, "device"), "device"),
                layout_of(path, need(path, e, "layout")), {}, e.Mark().line + 1};
    for (const Entry& x : t.entries_)
      if (x.op == entry.op && x.backend == entry.backend && x.device == entry.device && x.layout == entry.layout)
        bad(path, e, "a second entry for " + op_text + " " + entry.backend + "/" + entry.device + " " +
                         entry.layout.label() + " (the first is on line " + std::to_string(x.line) + ")");
    const YAML::Node ranges = need(path, e, "ranges");
    if (!ranges.IsSequence() || ranges.size() == 0) bad(path, ranges, "ranges is not a non-empty list");
    std::uint64_t next = 0;  // ranges tile [0, inf) in order
    bool open = false;
    for (const auto& r : ranges) {
      if (!r.IsMap()) bad(path, r, "a range is not a mapping {min_bytes, max_bytes, algo}");
      Range range;
      range.line = r.Mark().line + 1;
      range.min_bytes = static_cast<std::uint64_t>(integer(path, need(path, r, "min_bytes"), "min_bytes", 0));
      const YAML::Node max = need(path, r, "max_bytes");
      if (!max.IsNull()) range.max_bytes = static_cast<std::uint64_t>(integer(path, max, "max_bytes", 0));
      range.algo = name(path, need(path, r, "algo"), "algo");
      if (open || range.min_bytes != next)
        bad(path, r, "ranges must tile [0, inf) in order (expected min_bytes " + std::to_string(next) + ")");
      if (range.max_bytes && *range.max_bytes < range.min_bytes) bad(path, r, "max_bytes below min_bytes");
      open = !range.max_bytes;
      next = range.max_bytes ? *range.max_bytes + 1 : 0;
      entry.ranges.push_back(std::move(range));
    }
    if (!open) bad(path, ranges, "the last range must end with max_bytes: null");
    t.entries_.push_back(std::move(entry));
  }
  return t;
}

std::vector<Tuning::Named> Tuning::named() const {
  std::vector<Named> out;
  for (const Entry& e : entries_)
    for (const Range& r : e.ranges) out.push_back({e.op, e.backend, e.device, r.algo, path_ + ":" + std::to_string(r.line)});
  return out;
}

TunedChoice Tuning::choose(Op op, const std::string& backend, const std::string& device, const TunedLayout& layout,
                           std::uint64_t bytes) const {
  // The exact layout, else the nearest: fewest nodes apart, then fewest ranks apart, then the smaller.
  const Entry* best = nullptr;
  std::tuple<int, int, int> best_key{};
  for (const Entry& e : entries_) {
    if (e.op != op || e.backend != backend || e.device != device) continue;
    const int dn = std::abs(e.layout.nodes() - layout.nodes()),
              dw = std::abs(e.layout.world_size() - layout.world_size());
    const std::tuple<int, int, int> key{e.layout == layout ? -1 : dn, dw, e.layout.world_size()};
    if (!best || key < best_key) {
      best = &e;
      best_key = key;
    }
  }
  if (!best) return {"library", "none", "no entry for " + std::string(op_name(op)) + " on " + backend + "/" + device};
  for (const Range& r : best->ranges)
    if (bytes >= r.min_bytes && (!r.max_bytes || bytes <= *r.max_bytes))
      return {r.algo, path_ + ":" + std::to_string(r.line),
              best->layout == layout ? "exact" : "nearest " + best->layout.label()};
  return {"library", "none", "no range holds the size"};  // unreachable for a parsed file: ranges tile [0, inf)
}

}  // namespace collbench
