#include "collectives/backends/mpi/preload/settings.hpp"

#include <dlfcn.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "collectives/backends/mpi/preload/messages.hpp"
#include "collectives/formats/tuning.hpp"

namespace collbench::preload {
namespace {

// What rank 0 broadcasts: the settings' strings, each as its length and its bytes.
std::string pack(const Settings& s) {
  std::string out;
  for (const std::string* f : {&s.tuning_path, &s.summary, &s.text, &s.error}) {
    const std::uint64_t len = f->size();
    out.append(reinterpret_cast<const char*>(&len), sizeof len);
    out += *f;
  }
  return out;
}

Settings unpack(const std::string& in) {
  Settings s;
  std::size_t at = 0;
  for (std::string* f : {&s.tuning_path, &s.summary, &s.text, &s.error}) {
    std::uint64_t len = 0;
    std::memcpy(&len, in.data() + at, sizeof len);
    at += sizeof len;
    *f = in.substr(at, len);
    at += len;
  }
  return s;
}

// Rank 0's COLLBENCH_TUNING and COLLBENCH_PMPI_SUMMARY, and the tuning file's bytes or why it
// could not be read.
Settings rank0_settings() {
  Settings s;
  if (const char* v = std::getenv(kSummaryVar); v && *v && std::strcmp(v, "0") != 0)
    s.summary = std::strcmp(v, "1") == 0 ? "stderr" : v;
  const char* path = std::getenv(kTuningVar);
  if (!path || !*path) return s;
  s.tuning_path = path;
  try {
    s.text = read_tuning_file(path);
  } catch (const std::exception& e) {
    s.error = e.what();  // "--tuning PATH: cannot read (...)": the variable's line says the path
    if (const std::string flag = "--tuning " + s.tuning_path + ": "; s.error.rfind(flag, 0) == 0)
      s.error.erase(0, flag.size());
  }
  return s;
}

}  // namespace

Settings agreed_settings(int provided) {
  const int rank = world_rank();
  // Rank 0's settings and file, so every rank decides from the same bytes.
  std::string bytes = rank == 0 ? pack(rank0_settings()) : std::string();
  std::uint64_t len = bytes.size();
  PMPI_Bcast(&len, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  bytes.resize(len);
  PMPI_Bcast(bytes.data(), static_cast<int>(len), MPI_BYTE, 0, MPI_COMM_WORLD);
  Settings s = unpack(bytes);
  // Agreed over the world (one rank alone cannot fall back): the thread level, where above
  // FUNNELED another thread may call MPI while one call is served; and whether the CUDA driver
  // is loaded, where a buffer may be device memory, which this library's algorithms (host
  // loads and stores) must never touch and cannot tell from host memory without it.
  int refuse[2] = {provided > MPI_THREAD_FUNNELED ? 1 : 0, dlsym(RTLD_DEFAULT, "cuInit") ? 1 : 0};
  PMPI_Allreduce(MPI_IN_PLACE, refuse, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  s.threads = refuse[0] != 0;
  s.cuda = refuse[1] != 0;
  return s;
}

}  // namespace collbench::preload
