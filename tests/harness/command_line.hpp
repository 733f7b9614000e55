#pragma once
// collbench's command line parsed as the program parses it (argv[0] "collbench"), for the
// harness's tests of options, sweep files and their layering.
#include <string>
#include <utility>
#include <vector>

#include "harness/plan/cli.hpp"

namespace collbench::testing {

inline CommandLine parse_command(std::vector<std::string> args) {
  args.insert(args.begin(), "collbench");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

inline RunConfig parse_config(std::vector<std::string> args) { return parse_command(std::move(args)).config; }

}  // namespace collbench::testing
