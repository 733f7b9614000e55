// collectives/formats/yaml_types.hpp: YAML scalars typed and valued as PyYAML's safe_load makes them
// (the expectations below are what PyYAML 6 printed for each), so that the tuning and
// expectation readers see a file as its JSON Schema does (tests/harness/formats.py).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "collectives/formats/yaml_types.hpp"

namespace collbench {
namespace {

YAML::Node value(const std::string& text) { return YAML::Load("v: " + text)["v"]; }

TEST(YamlTypes, PlainScalarsResolveAsPyYaml) {
  const std::pair<const char*, YamlType> cases[] = {
      {"5", YamlType::integer},      {"-3", YamlType::integer},         {"010", YamlType::integer},
      {"0x1F", YamlType::integer},   {"0b101", YamlType::integer},      {"1_000", YamlType::integer},
      {"1:30", YamlType::integer},   {"1.5", YamlType::number},         {"1.", YamlType::number},
      {".5", YamlType::number},      {"1.0e+3", YamlType::number},      {"-.inf", YamlType::number},
      {".NaN", YamlType::number},    {"yes", YamlType::boolean},        {"No", YamlType::boolean},
      {"OFF", YamlType::boolean},    {"True", YamlType::boolean},       {"~", YamlType::null},
      {"null", YamlType::null},      {"", YamlType::null},              {"2026-11-25", YamlType::timestamp},
      {"2026-11-25T06:40:00Z", YamlType::timestamp},                    {"1e3", YamlType::string},
      {"1e-1", YamlType::string},    {"0o10", YamlType::string},        {"08", YamlType::string},
      {"y", YamlType::string},       {"16M", YamlType::string},         {"abc", YamlType::string},
      {"'5'", YamlType::string},     {"\"true\"", YamlType::string},    {"!!str 7", YamlType::string},
      {"!!int '7'", YamlType::integer}, {"[1]", YamlType::sequence},    {"{a: 1}", YamlType::mapping}};
  for (const auto& [text, type] : cases) EXPECT_EQ(yaml_type(value(text)), type) << text;
}

TEST(YamlTypes, ValuesAsPyYamlConstructsThem) {
  EXPECT_EQ(yaml_int(value("010")), 8);
  EXPECT_EQ(yaml_int(value("0x1F")), 31);
  EXPECT_EQ(yaml_int(value("0b101")), 5);
  EXPECT_EQ(yaml_int(value("-1_000")), -1000);
  EXPECT_EQ(yaml_int(value("1:30")), 90);
  EXPECT_EQ(yaml_int(value("9223372036854775807")), 9223372036854775807LL);
  EXPECT_FALSE(yaml_int(value("9223372036854775808")));  // beyond 64 bits
  EXPECT_FALSE(yaml_int(value("'5'")));
  EXPECT_EQ(yaml_integer(value("1024.0")), 1024);  // JSON Schema's integer
  EXPECT_FALSE(yaml_integer(value("1023.5")));
  EXPECT_EQ(yaml_number(value("1_000.5")), 1000.5);
  EXPECT_EQ(yaml_number(value("1:30.5")), 90.5);
  EXPECT_TRUE(std::isinf(*yaml_number(value("-.inf"))));
  EXPECT_FALSE(yaml_number(value("1e3")));  // a string to YAML 1.1
  EXPECT_EQ(yaml_bool(value("on")), true);
  EXPECT_EQ(yaml_bool(value("No")), false);
  EXPECT_FALSE(yaml_bool(value("'true'")));
}

}  // namespace
}  // namespace collbench
