// NCCL's algorithm and protocol choices as library variants ("library:ring_ll128",
// "library:tree" ...), so our ring is measured next to NCCL's ring in each protocol. One line
// of kVariants per variant.
//
// How the choice is forced: NCCL reads NCCL_ALGO and NCCL_PROTO when a communicator is
// initialised (ncclTopoTuneModel, every ncclCommInitRank/ncclCommSplit) and tunes that
// communicator from them. So each variant runs the same call as "library" on a communicator of
// its own, split once (in the warm-up) with the two variables set in the environment for that
// moment only; "library", the variants and our algorithms then alternate in one interleaved
// run. A single-rank communicator runs no ring or tree (NCCL copies locally): refused below 2
// ranks. A choice this GPU/NCCL cannot run (LL128 where NCCL does not support it, tree off
// allreduce) fails at the first call with NCCL's own error.
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "collectives/registry.hpp"
#include "collectives/backends/nccl/nccl_transport.hpp"

namespace collbench {
namespace {

struct Variant {
  Op op;
  const char* name;   // library:<name>
  const char* algo;   // NCCL_ALGO
  const char* proto;  // NCCL_PROTO; nullptr: NCCL's own choice
};

constexpr Variant kVariants[] = {
    {Op::allreduce, "ring", "Ring", nullptr},
    {Op::allreduce, "ring_ll", "Ring", "LL"},
    {Op::allreduce, "ring_ll128", "Ring", "LL128"},
    {Op::allreduce, "ring_simple", "Ring", "Simple"},
    {Op::allreduce, "tree", "Tree", nullptr},
    {Op::allreduce, "tree_ll", "Tree", "LL"},
    {Op::allreduce, "tree_ll128", "Tree", "LL128"},
    {Op::allreduce, "tree_simple", "Tree", "Simple"},
    {Op::broadcast, "ring_ll", "Ring", "LL"},
    {Op::broadcast, "ring_ll128", "Ring", "LL128"},
    {Op::broadcast, "ring_simple", "Ring", "Simple"},
    {Op::reduce, "ring_ll", "Ring", "LL"},
    {Op::reduce, "ring_ll128", "Ring", "LL128"},
    {Op::reduce, "ring_simple", "Ring", "Simple"},
    {Op::allgather, "ring_ll", "Ring", "LL"},
    {Op::allgather, "ring_ll128", "Ring", "LL128"},
    {Op::allgather, "ring_simple", "Ring", "Simple"},
    {Op::reduce_scatter, "ring_ll", "Ring", "LL"},
    {Op::reduce_scatter, "ring_ll128", "Ring", "LL128"},
    {Op::reduce_scatter, "ring_simple", "Ring", "Simple"},
};

// Sets (or, for nullptr, unsets) an environment variable and restores it when destroyed.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (saved_) setenv(name_, saved_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

template <std::size_t I>
void run(Transport& t, const CollArgs& a) {
  constexpr const Variant& v = kVariants[I];
  if (dynamic_cast<NcclTransport*>(&t) == nullptr) throw NotSupported("NCCL library variants need the nccl backend");
  const AlgoEntry* library = Registry::get().find(v.op, "library", "nccl");
  if (library == nullptr) throw NotSupported("no NCCL library entry for this op", t.error_context());
  const std::string name = std::string("library/nccl/") + v.algo + "/" + (v.proto ? v.proto : "");
  Transport* forced = nullptr;
  if (t.has_split(name)) {
    forced = t.split(name, 0, t.rank());
  } else {
    const ScopedEnv algo("NCCL_ALGO", v.algo), proto("NCCL_PROTO", v.proto);  // only while it is made
    forced = t.split(name, 0, t.rank());
  }
  library->run(*forced, a);
}

template <std::size_t I>
std::optional<std::string> supports(int n, const CollArgs&) {
  if (n < 2) return "NCCL runs no ring or tree at 1 rank (a single-rank communicator copies locally): needs 2 GPUs";
  return std::nullopt;
}

// From the variant, not the entry's name: --algo auto runs this entry renamed "auto".
template <std::size_t I>
LibraryConfig config(const AlgoEntry&, const CollArgs&) {
  constexpr const Variant& v = kVariants[I];
  LibraryConfig c{{"NCCL_ALGO", v.algo}};
  if (v.proto) c.emplace_back("NCCL_PROTO", v.proto);
  else if (const char* p = std::getenv("NCCL_PROTO")) c.emplace_back("NCCL_PROTO", p);  // inherited
  return c;
}

template <std::size_t... I>
bool register_all(std::index_sequence<I...>) {
  (Registry::add(AlgoEntry{kVariants[I].op, std::string("library:") + kVariants[I].name, "nccl",
                           std::string("NCCL's own collective with NCCL_ALGO=") + kVariants[I].algo +
                               (kVariants[I].proto ? std::string(" NCCL_PROTO=") + kVariants[I].proto : std::string()),
                           "at least 2 ranks (GPUs); device memory on the nccl backend", &run<I>, &supports<I>, nullptr,
                           /*native_avg=*/kVariants[I].op == Op::allreduce || kVariants[I].op == Op::reduce ||
                               kVariants[I].op == Op::reduce_scatter,
                           &config<I>, /*on_request=*/true}),
   ...);
  return true;
}

[[maybe_unused]] const bool registered = register_all(std::make_index_sequence<std::size(kVariants)>{});

}  // namespace
}  // namespace collbench
