#pragma once
// `collbench --list`: every (op, algo, backend) with its description and requirements; with
// `--json`, the same as JSON with each entry's traits (docs/records.md "Algorithm traits").
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/registry.hpp"
#include "harness/plan/run_config.hpp"
#include "harness/results/records.hpp"

namespace collbench {

// Which entries `--list` prints: these ops' (empty: every op's; pingpong: its methods) on this
// backend (and those of every backend, "any"); nothing: every entry.
struct ListFilter {
  std::vector<OpChoice> ops;
  std::optional<std::string> backend;
};

// One row per entry, columns as wide as the longest name, lines of at most 100 columns; in
// `listed` order: by op, the library's own first, then its variants, then the rest by name.
void print_algorithm_list(std::FILE* out, const Registry& registry, const ListFilter& filter = {});

// `--list --json`'s text: {"algorithms": [every entry, in --list's order], "pingpong": [its
// methods: algo, description]}, then a newline.
std::string algorithm_list_json(const Registry& registry);

}  // namespace collbench
