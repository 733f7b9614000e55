#pragma once
// `collbench --list`: every (op, algo, backend) with its description and requirements.
#include <cstdio>

#include "collectives/registry.hpp"

namespace collbench {

void print_algorithm_list(std::FILE* out, const Registry& registry);

}  // namespace collbench
