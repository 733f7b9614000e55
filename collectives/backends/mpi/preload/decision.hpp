#pragma once
// Which algorithm serves a call (docs/preload.md "What is served, and what falls back"): decided
// from what MPI requires to match on every rank (signature.hpp: the count and type signature of
// the significant side, the op, the root, the communicator) and the tuning file every rank holds
// the same bytes of, so every rank serves it with the same algorithm or makes the library's call
// alike. And what the settings leave to serve at all (coverage), said once at MPI_Init.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/backends/mpi/preload/context.hpp"
#include "collectives/backends/mpi/preload/preload.hpp"
#include "collectives/backends/mpi/preload/settings.hpp"
#include "collectives/backends/mpi/preload/signature.hpp"
#include "collectives/registry.hpp"
#include "collectives/formats/tuning.hpp"

namespace collbench::preload {

// What the agreed settings leave to serve: the tuning file, or why nothing is served; and the
// lines rank 0 says about it at MPI_Init.
struct Coverage {
  std::optional<Tuning> tuning;
  std::string off;                 // non-empty: nothing is served, and why (threads, tuning file)
  std::vector<std::string> lines;  // nothing served, or algorithms the file names that collbench lacks
};
Coverage coverage(const Settings& s);

// How one call is served, as Decision::decide leaves it.
struct Plan {
  Context* ctx = nullptr;
  const AlgoEntry* entry = nullptr;  // null: the library's call
  std::string_view why;              // the library: why (a literal, or text the Decision or context keeps)
  std::uint64_t bytes = 0;           // the call's size as tuning files count it (nccl-tests' size)
  Signature sig;                     // of the deciding side (per chunk)
  DType dtype = DType::uint8;        // what the algorithm moves: the basic type, or its bytes
  std::size_t count = 0;             // elements of dtype per chunk
  int rank = 0, size = 1;
};

class Decision {
 public:
  // `off` non-empty: nothing is served, and why; `keyval`: the contexts' attribute.
  Decision(std::optional<Tuning> tuning, std::string off, int keyval);

  // Fills `p` for `c`: an algorithm, or the library and why. `timed`: the summary counts the
  // call, so its size is worked out even where nothing is served.
  void decide(const Call& c, Plan& p, bool timed);
  const std::optional<Tuning>& tuning() const { return tuning_; }
  Contexts& contexts() { return contexts_; }

 private:
  std::optional<Tuning> tuning_;
  std::string off_;
  Signatures signatures_;
  Contexts contexts_;
};

}  // namespace collbench::preload
