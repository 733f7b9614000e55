// MPICH's own algorithms as library variants ("library:recursive_doubling", "library:brucks" ...),
// so our algorithms are measured next to MPICH's. One line of kVariants per algorithm; the names
// are the enumerators of MPIR_CVAR_<OP>_INTRA_ALGORITHM (MPICH 4.0.2, src/mpi/coll/cvars.txt),
// their values read from MPI_T at runtime (mpich_enum.hpp).
//
// How the choice is forced (MPICH 4.0.2 ch4, checked): the variables are process-global and
// read on every call, so each call of a variant sets three of them through MPI_T, makes the
// plain MPI call, and restores them (six MPI_T_cvar_write on handles made once: the only cost
// inside the timed call, bench/README.md); the harness's own traffic never runs forced.
// - MPIR_CVAR_DEVICE_COLLECTIVES=none: with the default (percoll) ch4 selects first (one node's
//   allreduce/bcast/reduce go to POSIX release_gather) and never reads the MPIR variable.
// - MPIR_CVAR_<OP>_INTRA_ALGORITHM=<algorithm>.
// - MPIR_CVAR_COLLECTIVE_FALLBACK=error: where MPICH's check says the algorithm cannot apply
//   (e.g. reduce_scatter_allgather below one element per power-of-two rank), the call returns an
//   error instead of silently running another algorithm; the variant turns that into a skip with
//   MPICH's reason (every rank alike: the check reads only count, op and communicator).
// Left out: "smp" (MPICH's smp allreduce calls MPIR_Allreduce again on the node leaders, which
// reads the same forced value and fails its check: with FALLBACK=error smp always errors,
// measured; with fallback allowed a non-hierarchical communicator would run another algorithm
// under smp's name) and "nb" (the nonblocking schedule, whose algorithm another variable picks).
#include <mpi.h>

#include <array>
#include <cctype>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "collectives/backends/mpi/mpi_library.hpp"
#include "collectives/backends/mpi/mpi_mpich.hpp"
#include "collectives/backends/mpi/mpi_ompi_vars.hpp"
#include "collectives/backends/mpi/mpich_enum.hpp"

namespace collbench {
namespace {

struct Variant {
  Op op;
  const char* name;  // the enumerator of MPIR_CVAR_<OP>_INTRA_ALGORITHM
  const char* description;
};

constexpr Variant kVariants[] = {
    {Op::allreduce, "recursive_doubling", "recursive doubling (extra ranks folded in)"},
    {Op::allreduce, "reduce_scatter_allgather", "recursive-halving reduce-scatter + recursive-doubling allgather"},
    {Op::broadcast, "binomial", "binomial tree"},
    {Op::broadcast, "scatter_recursive_doubling_allgather", "binomial scatter + recursive-doubling allgather"},
    {Op::broadcast, "scatter_ring_allgather", "binomial scatter + ring allgather"},
    {Op::allgather, "brucks", "Bruck's algorithm"},
    {Op::allgather, "recursive_doubling", "recursive doubling"},
    {Op::allgather, "ring", "ring"},
    {Op::reduce_scatter, "noncommutative", "recursive halving over bit-reversed blocks (any op)"},
    {Op::reduce_scatter, "pairwise", "pairwise exchange: n-1 steps, one block each"},
    {Op::reduce_scatter, "recursive_doubling", "recursive doubling"},
    {Op::reduce_scatter, "recursive_halving", "recursive halving"},
};

// Every enumerator MPICH 4.0.2 has for these variables: only to name a value in the records
// ("auto" rather than 0); what is written comes from the description at runtime.
constexpr std::string_view kAlgorithmNames[] = {
    "auto", "nb", "smp", "recursive_doubling", "reduce_scatter_allgather", "binomial",
    "scatter_recursive_doubling_allgather", "scatter_ring_allgather", "brucks", "ring", "noncommutative",
    "pairwise", "recursive_halving"};
constexpr std::string_view kDeviceNames[] = {"all", "none", "percoll"};
constexpr std::string_view kFallbackNames[] = {"error", "print", "silent"};

std::string algorithm_var(Op op) {
  std::string name(mpi_library::tuned_name(op));  // the MPI call's name: reduce_scatter_block
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "MPIR_CVAR_" + name + "_INTRA_ALGORITHM";
}

// A variable as it stands, named through its description where one of `names` fits.
std::optional<std::string> text(const std::string& var, std::span<const std::string_view> names) {
  const auto index = ompi::cvar_index(var);
  if (!index) return std::nullopt;
  const auto value = ompi::cvar_int(*index);
  const auto description = ompi::cvar_description(*index);
  if (!value || !description) return std::nullopt;
  if (auto n = mpich::enum_name(*description, *value, names)) return n;
  return std::to_string(*value);
}

// The three variables of one variant: resolved once (with a handle each), then set and restored
// around every call.
class Forcing {
 public:
  Forcing(const Variant& v, const Transport& t)
      : vars_{resolve("MPIR_CVAR_DEVICE_COLLECTIVES", "none", t), resolve(algorithm_var(v.op), v.name, t),
              resolve("MPIR_CVAR_COLLECTIVE_FALLBACK", "error", t)} {}
  void set() const {
    for (const Var& v : vars_) v.handle->write(v.forced);
  }
  void restore() const {
    for (const Var& v : vars_) v.handle->write(v.saved);
  }

 private:
  struct Var {
    std::unique_ptr<ompi::CvarHandle> handle;
    int forced = 0;
    int saved = 0;
  };
  static Var resolve(const std::string& var, std::string_view value, const Transport& t) {
    const auto index = ompi::cvar_index(var);
    if (!index) throw NotSupported("library:ALGO under MPICH needs " + var + ": this MPI has none", t.error_context());
    const auto description = ompi::cvar_description(*index);
    const auto forced = description ? mpich::enum_value(*description, value) : std::nullopt;
    if (!forced) throw NotSupported("this MPICH's " + var + " has no '" + std::string(value) + "'", t.error_context());
    const auto saved = ompi::cvar_int(*index);
    auto handle = std::make_unique<ompi::CvarHandle>(*index);
    // Written back unchanged first: a variable MPI_T will not write fails here, not mid-run.
    if (!saved || !handle->valid() || !handle->write(*saved))
      throw NotSupported("MPI_T refuses to set " + var, t.error_context());
    return {std::move(handle), *forced, *saved};
  }
  std::array<Var, 3> vars_;
};

// MPICH's answer when the forced algorithm cannot take these arguments (FALLBACK=error):
// "User set collective algorithm is not usable for the provided arguments".
constexpr std::string_view kNotUsable = "collective algorithm is not usable";

// Resolved once per process: the variables, their values and the handles do not change, and
// an unprepared call (avg wraps the entry, verification) must not look them up inside its timing.
// Never freed: MPI_T stays initialised for the process (mpi_ompi_vars.cpp), and a handle freed
// after MPI_Finalize, by a static's destructor, would be a call into a finalised MPI.
template <std::size_t I>
const Forcing& forcing(const Transport& t) {
  static const Forcing* const f = new Forcing(kVariants[I], t);
  return *f;
}

template <std::size_t I>
PreparedCall prepare(Transport& t, const CollArgs& a) {
  constexpr const Variant& v = kVariants[I];
  const Forcing* f = &forcing<I>(t);
  return [f, call = mpi_library::bind(v.op, t, a), &t] {
    // Restored however the call ends (a refusal, a timeout, a dead peer): nothing after it may
    // run forced.
    struct Restore {
      const Forcing* f;
      ~Restore() { f->restore(); }
    };
    f->set();
    const Restore restore{f};
    try {
      call();
    } catch (const TransportError& e) {
      if (e.message().find(kNotUsable) == std::string::npos) throw;
      throw NotSupported(std::string("MPICH cannot apply its ") + v.name +
                             " here (its own check, with MPIR_CVAR_COLLECTIVE_FALLBACK=error)",
                         t.error_context());
    }
  };
}

template <std::size_t I>
void run(Transport& t, const CollArgs& a) {
  prepare<I>(t, a)();
}

template <std::size_t I>
std::optional<std::string> supports(int n, const CollArgs&) {
  // One rank: MPICH returns before any algorithm runs (a copy at most).
  if (n < 2) return "at 1 rank MPICH runs no algorithm: its collectives return at once";
  return std::nullopt;
}

// What the variant's calls run with: the three variables as they are set during the call.
template <std::size_t I>
LibraryConfig config(const AlgoEntry& e, const CollArgs&) {
  return {{"MPIR_CVAR_DEVICE_COLLECTIVES", "none"},
          {algorithm_var(e.op), kVariants[I].name},
          {"MPIR_CVAR_COLLECTIVE_FALLBACK", "error"}};
}

template <std::size_t... I>
bool register_all(std::index_sequence<I...>) {
  (Registry::add(AlgoEntry{kVariants[I].op, std::string("library:") + kVariants[I].name, "mpi",
                           std::string(mpi_library::call_name(kVariants[I].op)) +
                               " with MPICH's " + kVariants[I].name + " forced: " + kVariants[I].description,
                           "MPICH, world size >= 2; where MPICH's own check refuses the case: skipped with its reason",
                           &run<I>, &supports<I>, nullptr, false, &config<I>, /*on_request=*/true, &prepare<I>}),
   ...);
  // Open MPI's own components are not built here: say so instead of "unknown algo".
  Registry::add_elsewhere("han", "mpi",
                          "han is Open MPI's coll/han: this collbench is built against MPICH (COLLBENCH_MPI=mpich)");
  return true;
}

[[maybe_unused]] const bool registered = register_all(std::make_index_sequence<std::size(kVariants)>{});

}  // namespace

LibraryConfig mpich_default_config(Op op) {
  LibraryConfig c;
  if (auto v = text("MPIR_CVAR_DEVICE_COLLECTIVES", kDeviceNames)) c.emplace_back("MPIR_CVAR_DEVICE_COLLECTIVES", *v);
  if (auto v = text(algorithm_var(op), kAlgorithmNames)) c.emplace_back(algorithm_var(op), *v);
  if (auto v = text("MPIR_CVAR_COLLECTIVE_FALLBACK", kFallbackNames)) c.emplace_back("MPIR_CVAR_COLLECTIVE_FALLBACK", *v);
  return c;
}

}  // namespace collbench
