#pragma once
// The process's Preload: the one piece of process state in this library, there by necessity —
// PMPI interposition gives MPI_Allreduce the application's arguments only (preload.hpp says
// more). It holds the decision (the tuning file, the communicators' contexts), the summary's
// counts, and whether a call is being served. start() makes it and stop() ends it (preload.cpp,
// which holds the pointer to it); serve() is serving.cpp's.
#include <optional>
#include <string>
#include <utility>

#include "collectives/backends/mpi/preload/decision.hpp"
#include "collectives/backends/mpi/preload/preload.hpp"
#include "collectives/backends/mpi/preload/summary.hpp"

namespace collbench::preload {

class Preload {
 public:
  Preload(std::optional<Tuning> tuning, std::string off, std::string summary, int keyval)
      : decision_(std::move(tuning), std::move(off), keyval), summary_(std::move(summary)) {}

  int serve(const Call& c, LibraryCall library);
  void stop();
  // A context is being freed (its communicator's delete callback).
  void forget(const Context* ctx) { decision_.contexts().forget(ctx); }

 private:
  Decision decision_;
  Summary summary_;
  bool busy_ = false;  // serving a call: an MPI_ collective now is a re-entry
};

}  // namespace collbench::preload
