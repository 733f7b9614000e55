#pragma once
// `collbench --list`: every (op, algo, backend) with its description and requirements; with
// `--json`, the same as JSON with each entry's traits (results/README.md "Algorithm traits").
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/registry.hpp"

namespace collbench {

void print_algorithm_list(std::FILE* out, const Registry& registry);

// One entry as the run record's `algorithms` and `--list --json` write it: op, algo, backend,
// (with_text: description, requirements,) traits {node_aware, peer_memory, library,
// simplicity_rank}.
nlohmann::ordered_json algorithm_json(const AlgoEntry& e, bool with_text = false);
nlohmann::ordered_json algorithms_json(const std::vector<const AlgoEntry*>& entries, bool with_text = false);

// `--list --json`'s text: {"algorithms": [every entry, in --list's order], "pingpong": [its
// methods: algo, description]}, then a newline.
std::string algorithm_list_json(const Registry& registry);

}  // namespace collbench
