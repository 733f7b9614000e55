#pragma once
// A launcher's environment as a map, for the readers of collectives/launch/ under test.
#include <map>
#include <string>

#include "collectives/launch/launchers.hpp"

namespace collbench::launch::testing {

inline GetEnv env_of(const std::map<std::string, std::string>& m) {
  return [m](const char* n) -> const char* {
    auto it = m.find(n);
    return it == m.end() ? nullptr : it->second.c_str();
  };
}

}  // namespace collbench::launch::testing
