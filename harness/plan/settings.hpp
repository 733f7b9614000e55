#pragma once
// The table of sweep settings: one row per setting, shared by the command line (cli.cpp) and
// the YAML sweep file (config.cpp), so both accept exactly the same names and values.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "harness/plan/run_config.hpp"

namespace collbench {

struct SettingOption {
  const char* name;        // YAML key; the long flag is "--" + name with '_' -> '-'
  const char* short_flag;  // "-b", or "" when none
  const char* value_name;  // "SIZE", or "" for a command-line switch that takes no value
  const char* help;
  const char* accepted;  // what values are valid, for "; accepted: ..." in errors
  bool list;             // YAML may give a sequence (joined with ',')
  void (*apply)(Settings&, std::string_view value);  // throws UsageError
};

std::span<const SettingOption> setting_options();
// Row by YAML key ("min_bytes" or "min-bytes"), or null.
const SettingOption* find_setting(std::string_view key);
std::string long_flag(const SettingOption& o);  // "--min-bytes"

// Applies one value; errors become "--min-bytes: <what>; accepted: <values>".
void apply_setting(Settings& s, const SettingOption& o, std::string_view value);

// Cross-field checks (min <= max, batch vs interleave...), after all layers are applied.
void validate_settings(const Settings& s);

// Small strict parsers shared with cli.cpp/config.cpp. All throw UsageError.
long long parse_int(std::string_view text, long long min, long long max, const char* accepted);
double parse_number(std::string_view text, double min, double max, const char* accepted);
bool parse_bool(std::string_view text);  // 0/1/true/false/yes/no/on/off
std::vector<std::string> split_list(std::string_view text);  // "a, b,c" -> {a,b,c}; empty items refused

// "allreduce,pingpong,broadcast" or "all" (every collective) -> ops in the order given, no repeats;
// any case, with or without '_' / '-' (all_reduce, AllReduce), aliases (bcast): spelling.hpp.
std::vector<OpChoice> parse_ops(std::string_view text);
// "Ring,tree" -> lower-case names, no repeats, "all" kept as a name (resolved per op against the
// registry later, plan.cpp); nothing given (empty) is the default.
std::vector<std::string> parse_algos(std::string_view text);
// "2x4" (nodes x ranks per node), checked and returned as given.
std::string parse_layout(std::string_view text);
std::string op_names();  // "broadcast, reduce, ..." for error messages

}  // namespace collbench
