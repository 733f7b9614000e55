#pragma once
// What every rank of the program starts from, alike on every rank (docs/preload.md): rank 0 reads
// COLLBENCH_TUNING, COLLBENCH_PMPI_SUMMARY and the tuning file and broadcasts them at MPI_Init,
// so every rank decides from the same bytes, whatever the other nodes' environment or copy of the
// file; and the world agrees on what forbids serving anything (a thread level, the CUDA driver).
#include <string>

namespace collbench::preload {

inline constexpr const char* kTuningVar = "COLLBENCH_TUNING";
inline constexpr const char* kSummaryVar = "COLLBENCH_PMPI_SUMMARY";

struct Settings {
  std::string tuning_path;  // rank 0's COLLBENCH_TUNING ("": unset)
  std::string summary;      // "": none; "stderr"; else a file path (rank 0's COLLBENCH_PMPI_SUMMARY)
  std::string text, error;  // the tuning file's bytes, or why it could not be read
  bool threads = false;     // some rank's thread level is above MPI_THREAD_FUNNELED
  bool cuda = false;        // some rank has the CUDA driver loaded
};

// The settings on every rank of MPI_COMM_WORLD: rank 0's variables and file, broadcast, and what
// every rank's `provided` thread level and CUDA driver say, agreed. Collective over WORLD.
Settings agreed_settings(int provided);

}  // namespace collbench::preload
