// Starting and stopping the process's Preload (state.hpp), the work of MPI_Init's and
// MPI_Finalize's wrappers: at MPI_Init, whether this process runs the MPI this library was built
// for, the settings every rank agrees on (settings.hpp), what they leave to serve, said once
// (decision.hpp's coverage), and the Preload; at MPI_Finalize, the summary (summary.hpp) and the
// contexts WORLD and SELF hold. The pointer to the Preload is this file's alone.
#include "collectives/backends/mpi/preload/preload.hpp"

#include <cstdlib>
#include <string>
#include <utility>

#include "collectives/backends/mpi/preload/decision.hpp"
#include "collectives/backends/mpi/preload/messages.hpp"
#include "collectives/backends/mpi/preload/settings.hpp"
#include "collectives/backends/mpi/preload/state.hpp"

namespace collbench::preload {
namespace {

#if defined(MPICH_VERSION)
constexpr const char* kBuiltFor = "MPICH";
#else
constexpr const char* kBuiltFor = "Open MPI";
#endif

std::string library_version() {
  // MPICH's MPI_MAX_LIBRARY_VERSION_STRING is 8192, Open MPI's 256: room for either, since this
  // runs before it is known which MPI answers.
  static char buf[16384];
  int len = 0;
  if (PMPI_Get_library_version(buf, &len) != MPI_SUCCESS || len <= 0) return "";
  std::string v(buf, static_cast<std::size_t>(len) < sizeof buf ? static_cast<std::size_t>(len) : 0);
  v = v.substr(0, v.find('\n'));
  while (!v.empty() && (v.back() == '\0' || v.back() == ' ' || v.back() == ','))
    v.pop_back();  // padding some MPIs leave
  return v;
}

Preload* g_preload = nullptr;  // the process's Preload (preload.hpp says why it is global)

// The attribute's delete callback: the communicator is being freed (or MPI_Finalize's wrapper
// deletes WORLD's and SELF's).
int delete_context(MPI_Comm, int, void* attr, void*) {
  auto* ctx = static_cast<Context*>(attr);
  if (g_preload) g_preload->forget(ctx);
  delete ctx;
  return MPI_SUCCESS;
}

}  // namespace

Preload* instance() { return g_preload; }

bool right_mpi() {
  const std::string v = library_version();
  if (v.rfind(kBuiltFor, 0) == 0) return true;
  const std::string runs =
      std::string("built for ") + kBuiltFor + ", but this process runs " + (v.empty() ? "an unknown MPI" : v);
  if constexpr (sizeof(MPI_Comm) < sizeof(void*)) {
    // Built with 32-bit integer handles (MPICH), passing another MPI's pointer handles through
    // would cut them: end here, saying so, before any call is made with one.
    say(runs +
        ": its handles cannot pass through this build; exiting (preload the libcollbench-pmpi.so built "
        "against the MPI the program links: docs/preload.md)");
    std::_Exit(1);
  }
  // Built with pointer-sized handles (Open MPI): another MPI's integer handles pass through intact.
  say(runs + ": nothing served (every call goes to the library as it is)");
  return false;
}

void start(int provided) {
  const Settings s = agreed_settings(provided);
  Coverage cov = coverage(s);
  if (world_rank() == 0)
    for (const std::string& l : cov.lines) say(l);
  int keyval = MPI_KEYVAL_INVALID;
  // Copy: nothing (a duplicate makes its own context at its first served call); delete: free it.
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_context, &keyval, nullptr);
  g_preload = new Preload(std::move(cov.tuning), std::move(cov.off), s.summary, keyval);
}

void Preload::stop() {
  const std::optional<Tuning>& tuning = decision_.tuning();
  summary_.report(tuning ? tuning->path() : "none");
  decision_.contexts().end();
}

void stop() {
  if (!g_preload) return;
  g_preload->stop();
  delete g_preload;
  g_preload = nullptr;
}

}  // namespace collbench::preload
