#pragma once
// How the preload library speaks: its name, one line on stderr, and the world rank its lines name.
#include <mpi.h>

#include <cstdio>
#include <string>

namespace collbench::preload {

inline constexpr const char* kSelf = "libcollbench-pmpi";

inline int world_rank() {
  int r = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// One line of this library on stderr (rank 0's, for what every rank knows alike).
inline void say(const std::string& line) {
  std::fprintf(stderr, "%s: %s\n", kSelf, line.c_str());
  std::fflush(stderr);
}

}  // namespace collbench::preload
