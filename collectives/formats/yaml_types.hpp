#pragma once
// What a YAML value is once loaded the way the analysis loads it (PyYAML's safe_load, YAML 1.1):
// the JSON type that the tuning and expectation files' JSON Schemas (results/schema/) check.
// yaml-cpp reads every scalar as text, so without this a C++ reader would take a quoted "5" for a
// number, a bare 1.5 where an integer belongs, or refuse `True` for a boolean, where the schema
// says otherwise. The readers ask here first, then convert.
#include <cstdint>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

namespace collbench {

enum class YamlType { null, boolean, integer, number, timestamp, string, sequence, mapping };

// A scalar's type by PyYAML's implicit resolvers (plain scalars), else string (quoted); an explicit
// !!tag decides where it names a core type.
YamlType yaml_type(const YAML::Node& n);
// "null", "a boolean", "an integer", "a number", "a timestamp", "a string", "a list", "a mapping".
const char* yaml_type_words(YamlType t);

// The value of a scalar of type boolean or integer, as PyYAML constructs it (integers: decimal
// with '_' separators, 0b, 0x, leading-0 octal, base 60); nullopt for any other node or when it
// does not fit.
std::optional<bool> yaml_bool(const YAML::Node& n);
std::optional<std::int64_t> yaml_int(const YAML::Node& n);
// An integer or a number (floats: '_' separators, base 60, .inf, .nan as PyYAML reads them).
std::optional<double> yaml_number(const YAML::Node& n);
// An integer as JSON Schema counts them once loaded: a YAML integer, or a number without a
// fractional part (1024.0); nullopt for anything else or beyond 64 bits.
std::optional<std::int64_t> yaml_integer(const YAML::Node& n);

}  // namespace collbench
