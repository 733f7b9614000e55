#include "collectives/formats/yaml_types.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <regex>
#include <string_view>

namespace collbench {
namespace {

// PyYAML 6's resolver.py (Resolver.add_implicit_resolver), YAML 1.1.
const std::regex kBool("yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF");
const std::regex kInt(
    "[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+");
const std::regex kFloat(
    "[-+]?(?:[0-9][0-9_]*)\\.[0-9_]*(?:[eE][-+][0-9]+)?|\\.[0-9_]+(?:[eE][-+][0-9]+)?"
    "|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN)");
const std::regex kNull("~|null|Null|NULL|");
const std::regex kTimestamp(
    "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"
    "|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \\t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\\.[0-9]*)?"
    "(?:[ \\t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?");

bool matches(const std::string& s, const std::regex& re) { return std::regex_match(s, re); }

}  // namespace

YamlType yaml_type(const YAML::Node& n) {
  if (n.IsSequence()) return YamlType::sequence;
  if (n.IsMap()) return YamlType::mapping;
  if (!n.IsDefined() || n.IsNull()) return YamlType::null;
  const std::string& tag = n.Tag();
  constexpr std::string_view kCore = "tag:yaml.org,2002:";
  if (tag.rfind(kCore, 0) == 0) {
    const std::string t = tag.substr(kCore.size());
    if (t == "int") return YamlType::integer;
    if (t == "float") return YamlType::number;
    if (t == "bool") return YamlType::boolean;
    if (t == "null") return YamlType::null;
    if (t == "timestamp") return YamlType::timestamp;
    return YamlType::string;
  }
  if (tag != "?") return YamlType::string;  // quoted ("!"), or a tag of its own
  const std::string& s = n.Scalar();
  if (matches(s, kNull)) return YamlType::null;
  if (matches(s, kBool)) return YamlType::boolean;
  if (matches(s, kInt)) return YamlType::integer;
  if (matches(s, kFloat)) return YamlType::number;
  if (matches(s, kTimestamp)) return YamlType::timestamp;
  return YamlType::string;
}

const char* yaml_type_words(YamlType t) {
  switch (t) {
    case YamlType::null: return "null";
    case YamlType::boolean: return "a boolean";
    case YamlType::integer: return "an integer";
    case YamlType::number: return "a number";
    case YamlType::timestamp: return "a timestamp";
    case YamlType::string: return "a string";
    case YamlType::sequence: return "a list";
    case YamlType::mapping: return "a mapping";
  }
  return "?";
}

std::optional<bool> yaml_bool(const YAML::Node& n) {
  if (yaml_type(n) != YamlType::boolean) return std::nullopt;
  const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(n.Scalar()[0])));
  const char d = n.Scalar().size() > 1 ? static_cast<char>(std::tolower(static_cast<unsigned char>(n.Scalar()[1]))) : 0;
  return c == 'y' || c == 't' || (c == 'o' && d == 'n');
}

std::optional<std::int64_t> yaml_int(const YAML::Node& n) {
  if (yaml_type(n) != YamlType::integer) return std::nullopt;
  std::string s;
  for (char c : n.Scalar())
    if (c != '_') s += c;  // PyYAML's construct_yaml_int drops the separators
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.erase(0, 1);
  }
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const auto digits = [&](std::string_view d, std::int64_t base) -> std::optional<std::int64_t> {
    std::int64_t v = 0;
    for (char c : d) {
      const auto u = static_cast<unsigned char>(c);
      const int x = std::isdigit(u) ? c - '0' : std::isalpha(u) ? std::tolower(u) - 'a' + 10 : -1;
      if (x < 0 || x >= base || v > (kMax - x) / base) return std::nullopt;  // not a digit, or too large
      v = v * base + x;
    }
    return v;
  };
  std::optional<std::int64_t> v;
  if (s == "0") {
    v = 0;
  } else if (s.rfind("0b", 0) == 0) {
    v = digits(std::string_view(s).substr(2), 2);
  } else if (s.rfind("0x", 0) == 0) {
    v = digits(std::string_view(s).substr(2), 16);
  } else if (s[0] == '0') {
    v = digits(std::string_view(s).substr(1), 8);
  } else if (s.find(':') != std::string::npos) {  // base 60: 1:30 is 90
    std::int64_t acc = 0;
    for (std::size_t start = 0;;) {
      const std::size_t end = s.find(':', start);
      const auto part = digits(std::string_view(s).substr(start, end == std::string::npos ? end : end - start), 10);
      if (!part || acc > (kMax - *part) / 60) return std::nullopt;
      acc = acc * 60 + *part;
      if (end == std::string::npos) break;
      start = end + 1;
    }
    v = acc;
  } else {
    v = digits(s, 10);
  }
  if (!v) return std::nullopt;
  return negative ? -*v : *v;
}

std::optional<double> yaml_number(const YAML::Node& n) {
  const YamlType t = yaml_type(n);
  if (t == YamlType::integer) {
    const auto v = yaml_int(n);
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
  }
  if (t != YamlType::number) return std::nullopt;
  std::string s;
  for (char c : n.Scalar())
    if (c != '_') s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double sign = 1;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    sign = s[0] == '-' ? -1 : 1;
    s.erase(0, 1);
  }
  if (s == ".inf") return sign * std::numeric_limits<double>::infinity();
  if (s == ".nan") return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  for (std::size_t start = 0;;) {  // base 60 when there are colons, else one part
    const std::size_t end = s.find(':', start);
    const std::string part = s.substr(start, end == std::string::npos ? end : end - start);
    char* stop = nullptr;
    const double x = std::strtod(part.c_str(), &stop);
    if (part.empty() || *stop != '\0') return std::nullopt;
    v = v * 60 + x;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return sign * v;
}

std::optional<std::int64_t> yaml_integer(const YAML::Node& n) {
  if (yaml_type(n) == YamlType::integer) return yaml_int(n);
  const std::optional<double> v = yaml_number(n);
  if (!v || !std::isfinite(*v) || std::trunc(*v) != *v || std::fabs(*v) >= 9.2e18) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

}  // namespace collbench
