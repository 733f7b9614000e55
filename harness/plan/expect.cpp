#include "harness/plan/expect.hpp"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "collectives/collective.hpp"
#include "collectives/core/error.hpp"
#include "collectives/registry.hpp"
#include "harness/plan/p2p_method.hpp"
#include "harness/plan/settings.hpp"
#include "harness/plan/sizes.hpp"
#include "collectives/formats/yaml_types.hpp"

namespace collbench {
namespace {

constexpr const char* kExpectSchema = "collbench-expect/1";
constexpr const char* kAccepted =
    "; accepted: a collbench-expect/1 file (results/README.md \"Expectation files\"), e.g. written by "
    "collcompare RESULTS --write-expect FILE";

[[noreturn]] void bad(const std::string& path, const YAML::Node& at, const std::string& what) {
  const int line = at.IsDefined() && at.Mark().line >= 0 ? at.Mark().line + 1 : 0;
  throw UsageError("expectation file " + path + (line ? ":" + std::to_string(line) : "") + ": " + what + kAccepted);
}

// Values are typed as the schema (results/schema/collbench-expect-1.json) sees the file once
// loaded (yaml_types.hpp): a quoted "5" is a string, a bare 1.5 a number, True a boolean.
std::string scalar(const std::string& path, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar()) bad(path, n, key + " is not a single value");
  return n.Scalar();
}

// A name: op, algo, dtype, schema, a layout's text.
std::string name_of(const std::string& path, const YAML::Node& n, const std::string& key) {
  const std::string s = scalar(path, n, key);
  if (const YamlType t = yaml_type(n); t != YamlType::string)
    bad(path, n, key + " '" + s + "' is " + yaml_type_words(t) + ", not a name");
  return s;
}

double number(const std::string& path, const YAML::Node& n, const std::string& key) {
  const std::string s = scalar(path, n, key);
  const std::optional<double> v = yaml_number(n);
  if (!v || !std::isfinite(*v)) bad(path, n, key + " '" + s + "' is not a number");
  if (*v < 0) bad(path, n, key + " " + s + " is negative");
  return *v;
}

// 0.1, or "10%" (digits, an optional decimal part, %); below 1 (a busbw floor of 0 checks nothing).
double fraction(const std::string& path, const YAML::Node& n) {
  std::string s = scalar(path, n, "tolerance");
  const bool percent = yaml_type(n) == YamlType::string && !s.empty() && s.back() == '%';
  double x = 0;
  if (percent) {
    s.pop_back();
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(x))
      bad(path, n, "tolerance '" + n.Scalar() + "' is not a fraction or a percentage (0.1 or 10%)");
    x /= 100;
  } else if (const auto v = yaml_number(n); v && std::isfinite(*v)) {
    x = *v;
  } else {
    bad(path, n, "tolerance '" + n.Scalar() + "' is not a fraction or a percentage (0.1 or 10%)");
  }
  if (x < 0) bad(path, n, "tolerance " + n.Scalar() + " is negative");
  if (x >= 1) bad(path, n, "tolerance " + n.Scalar() + " is not below 100%");
  static const std::regex kPercent("([0-9]|[1-9][0-9])(\\.[0-9]+)?%");  // the schema's pattern
  if (percent && !std::regex_match(n.Scalar(), kPercent))
    bad(path, n, "tolerance '" + n.Scalar() + "' is not a fraction or a percentage (0.1 or 10%)");
  return x;
}

// An integer number of bytes, or a size text ("16M", as on the command line).
std::uint64_t size(const std::string& path, const YAML::Node& n, const std::string& key) {
  const std::string s = scalar(path, n, key);
  const YamlType t = yaml_type(n);
  if (t == YamlType::integer || t == YamlType::number) {  // 1024.0 is an integer to the schema too
    const std::optional<std::int64_t> v = yaml_integer(n);
    if (!v || *v < 0)
      bad(path, n, key + " '" + s + "': " + (v ? "negative" : "not a whole number of bytes in 64 bits"));
    return static_cast<std::uint64_t>(*v);
  }
  if (t != YamlType::string) bad(path, n, key + " '" + s + "' is " + yaml_type_words(t) + ", not a size");
  try {
    return parse_size(s);
  } catch (const UsageError& e) {
    bad(path, n, key + " '" + s + "': " + e.what());
  }
}

bool boolean(const std::string& path, const YAML::Node& n, const std::string& key) {
  const std::string s = scalar(path, n, key);
  const std::optional<bool> b = yaml_bool(n);
  if (!b) bad(path, n, key + " '" + s + "' is not true or false");
  return *b;
}

// "2x4" (nodes x ranks per node), [3, 1] (ranks of each node), or "any" (none).
std::optional<TunedLayout> layout(const std::string& path, const YAML::Node& n) {
  TunedLayout l;
  if (n.IsSequence()) {
    for (const auto& k : n) {
      const std::optional<std::int64_t> v = yaml_integer(k);
      if (!v) bad(path, k, "layout's rank count '" + scalar(path, k, "layout's rank count") + "' is not an integer");
      if (*v < 1 || *v > (1 << 20)) bad(path, k, "layout has a node with no ranks, or more than 2^20");
      l.ranks_per_node.push_back(static_cast<int>(*v));
    }
  } else {
    const std::string s = name_of(path, n, "layout");
    if (s == "any") return std::nullopt;
    const std::size_t x = s.find('x');
    int nodes = 0, per = 0;
    const auto a = std::from_chars(s.data(), s.data() + (x == std::string::npos ? 0 : x), nodes);
    const auto b = x == std::string::npos ? a : std::from_chars(s.data() + x + 1, s.data() + s.size(), per);
    if (x == std::string::npos || a.ec != std::errc{} || a.ptr != s.data() + x || b.ec != std::errc{} ||
        b.ptr != s.data() + s.size())
      bad(path, n, "layout '" + s + "' is not NODESxRANKS_PER_NODE (e.g. 1x4), a list of ranks per node, or any");
    if (nodes > (1 << 20) || per > (1 << 20)) bad(path, n, "layout '" + s + "' is larger than 2^20 ranks");
    l.ranks_per_node.assign(static_cast<std::size_t>(std::max(nodes, 0)), per);
  }
  if (l.ranks_per_node.empty()) bad(path, n, "layout has no node");
  for (int k : l.ranks_per_node)
    if (k < 1) bad(path, n, "layout has a node with no ranks");
  return l;
}

// Every algorithm name the registry knows for `op` (any backend), plus what --algo accepts
// beyond the registry.
bool algo_known(const std::string& op, const std::string& algo) {
  if (algo == "any") return true;
  if (op == kPingpongOp) return parse_p2p_method(algo).has_value();
  if (algo == "auto") return true;
  const std::optional<Op> o = parse_op(op);
  for (const AlgoEntry& e : Registry::get().all())
    if (e.op == *o && e.algo == algo) return true;
  return false;
}

std::string known_algos(const std::string& op) {
  std::set<std::string> names{"any"};
  if (op == kPingpongOp) {
    for (const auto& m : kP2pMethods) names.insert(m.name);
  } else {
    names.insert("auto");
    for (const AlgoEntry& e : Registry::get().all())
      if (e.op == *parse_op(op)) names.insert(e.algo);
  }
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

ExpectEntry entry(const std::string& path, const YAML::Node& e, double default_tolerance) {
  if (!e.IsMap()) bad(path, e, "an entry is not a mapping");
  static const std::set<std::string> kKeys{"op",    "algo",           "layout",      "bytes",    "min_bytes",
                                           "max_bytes", "dtype",      "in_place",    "min_busbw_GBps",
                                           "max_time_us", "tolerance"};
  for (const auto& kv : e) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "(not a name)";
    if (!kKeys.count(key)) bad(path, kv.first, "unknown key '" + key + "' in an entry");
  }
  ExpectEntry x;
  x.line = e.Mark().line + 1;
  if (!e["op"]) bad(path, e, "entry without 'op'");
  x.op = name_of(path, e["op"], "op");
  if (x.op != kPingpongOp && !parse_op(x.op)) bad(path, e["op"], "unknown op '" + x.op + "' (" + op_names() + ")");
  if (!e["algo"]) bad(path, e, "entry without 'algo' (an algorithm, or any)");
  x.algo = name_of(path, e["algo"], "algo");
  if (!algo_known(x.op, x.algo))
    bad(path, e["algo"], "unknown algo '" + x.algo + "' for " + x.op + " (" + known_algos(x.op) + ")");
  if (e["layout"]) x.layout = layout(path, e["layout"]);
  if (e["bytes"] && (e["min_bytes"] || e["max_bytes"]))
    bad(path, e["bytes"], "bytes and min_bytes/max_bytes cannot be combined");
  if (e["bytes"]) x.min_bytes = x.max_bytes.emplace(size(path, e["bytes"], "bytes"));
  if (e["min_bytes"]) x.min_bytes = size(path, e["min_bytes"], "min_bytes");
  if (e["max_bytes"]) x.max_bytes = size(path, e["max_bytes"], "max_bytes");
  if (x.max_bytes && *x.max_bytes < x.min_bytes) bad(path, e["max_bytes"], "max_bytes is below min_bytes");
  if (e["dtype"]) {
    x.dtype = name_of(path, e["dtype"], "dtype");
    if (!parse_dtype(*x.dtype)) bad(path, e["dtype"], "unknown dtype '" + *x.dtype + "'");
  }
  if (e["in_place"]) x.in_place = boolean(path, e["in_place"], "in_place");
  if (e["min_busbw_GBps"]) x.min_busbw_GBps = number(path, e["min_busbw_GBps"], "min_busbw_GBps");
  if (e["max_time_us"]) x.max_time_us = number(path, e["max_time_us"], "max_time_us");
  if (x.min_busbw_GBps.has_value() == x.max_time_us.has_value())
    bad(path, e, "an entry needs exactly one of min_busbw_GBps and max_time_us");
  x.tolerance = e["tolerance"] ? fraction(path, e["tolerance"]) : default_tolerance;
  return x;
}

}  // namespace

Expectations Expectations::parse(const std::string& text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw UsageError("expectation file " + path + ":" + std::to_string(e.mark.line + 1) + ": not YAML (" + e.msg + ")" +
                     kAccepted);
  }
  if (!root.IsMap()) bad(path, root, "not a mapping");
  for (const auto& kv : root) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "(not a name)";
    static const std::set<std::string> kTop{"schema", "tolerance", "entries", "generated", "tool", "sources", "runs"};
    if (!kTop.count(key))
      bad(path, kv.first, "unknown key '" + key + "' (schema, tolerance, entries; generated, tool, sources, runs)");
  }
  if (root["schema"] && name_of(path, root["schema"], "schema") != kExpectSchema)
    bad(path, root["schema"], "schema '" + root["schema"].Scalar() + "' is not " + kExpectSchema);
  const double tolerance = root["tolerance"] ? fraction(path, root["tolerance"]) : 0.0;
  const YAML::Node entries = root["entries"];
  if (!entries) bad(path, root, "no 'entries'");
  if (!entries.IsSequence() || entries.size() == 0) bad(path, entries, "entries is not a non-empty list");
  Expectations x;
  x.path_ = path;
  for (const auto& e : entries) x.entries_.push_back(entry(path, e, tolerance));
  return x;
}

Expectations Expectations::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  if (in.is_open()) bytes << in.rdbuf();
  if (!in.is_open() || in.bad())
    throw UsageError("--expect " + path + ": cannot read (" + std::strerror(errno) + ")" + kAccepted);
  return parse(bytes.str(), path);
}

}  // namespace collbench
