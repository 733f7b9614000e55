#pragma once
// The command line (CLI11) -> RunConfig, layered: built-in defaults < the --config file's
// defaults < its case overrides < flags given explicitly. Pure: no MPI, no files but --config.
#include <optional>
#include <string>
#include <vector>

#include "harness/plan/run_config.hpp"

namespace collbench {

struct CommandLine {
  RunConfig config;
  std::optional<std::string> help;  // --help, --help-all, --version: print this and exit 0
  // --list --op OP --backend B: list only these ops' entries (empty: every op) and this backend's
  // (and those of every backend, "any").
  std::vector<OpChoice> list_ops;
  std::optional<std::string> list_backend;
};

// Throws UsageError ("<what is wrong>; accepted: <values>") for anything invalid.
CommandLine parse_command_line(int argc, const char* const* argv);

}  // namespace collbench
