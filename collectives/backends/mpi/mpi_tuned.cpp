// Open MPI's coll/tuned algorithms as library variants ("library:ring", "library:binomial" ...),
// so our ring is measured next to Open MPI's ring. One line of kVariants per algorithm; the
// names are the enumerators of coll_tuned_<op>_algorithm (ompi_info --all --level 9).
//
// How the choice is forced (Open MPI 4.1.4, checked): coll/tuned reads its switch
// coll_tuned_use_dynamic_rules and copies coll_tuned_<op>_algorithm (+ _segmentsize) into
// a communicator's module when the communicator is made, and uses that copy from then on.
// So each variant runs the same MPI call as "library" on a communicator of its own, made once
// (in the warm-up) with those variables set for that moment only: the variants, "library"
// and our algorithms alternate in one interleaved run. The algorithm is set through MPI_T
// (writable there); use_dynamic_rules is read-only to MPI_T (MPI_T_ERR_CVAR_SET_NEVER) and is
// set in the MCA variable store as han's priority is (mpi_ompi_vars.hpp). With dynamic rules on
// and no algorithm forced, tuned uses its fixed decisions, so nothing else changes.
// Where an algorithm silently runs another one (ring below one element per rank, ...), the
// variant refuses the case with the reason instead of recording the other's time under its name.
#include <string>
#include <utility>

#include "collectives/backends/mpi/mpi_library.hpp"
#include "collectives/backends/mpi/mpi_ompi_vars.hpp"

namespace collbench {
namespace {

using Why = std::optional<std::string>;

int pof2_floor(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// Fallbacks inside Open MPI 4.1's coll/base algorithms (ompi/mca/coll/base/coll_base_*.c).
Why count_at_least_ranks(int n, const CollArgs& a) {
  if (a.count < static_cast<std::size_t>(n))
    return "Open MPI runs another algorithm below one element per rank (count < world size)";
  return std::nullopt;
}
Why segmented_ring(int n, const CollArgs& a) {
  const std::size_t seg = a.segment_bytes / a.elem_size();
  if (seg == 0 || a.count < static_cast<std::size_t>(n) * seg)
    return "Open MPI's segmented_ring runs its plain ring unless count >= world size x segment: set --segment "
           "(at most bytes / world size)";
  return std::nullopt;
}
Why rabenseifner(int n, const CollArgs& a) {
  if (a.count < static_cast<std::size_t>(pof2_floor(n)))
    return "Open MPI's rabenseifner runs basic_linear below one element per power-of-two rank";
  return std::nullopt;
}
Why power_of_two(int n, const CollArgs&) {
  if (n != pof2_floor(n)) return "Open MPI's allgather recursive_doubling runs bruck on a non-power-of-two world size";
  return std::nullopt;
}
Why even(int n, const CollArgs&) {
  if (n % 2) return "Open MPI's allgather neighbor exchange runs ring on an odd world size";
  return std::nullopt;
}
Why two_ranks(int n, const CollArgs&) {
  if (n != 2) return "Open MPI's two_proc allgather runs on exactly 2 ranks";
  return std::nullopt;
}
Why two_elements(int, const CollArgs& a) {
  if (a.count < 2) return "Open MPI's split_binary_tree runs chain below 2 elements";
  return std::nullopt;
}

struct Variant {
  Op op;
  const char* name;  // the enumerator of coll_tuned_<op>_algorithm
  CollFn call;
  const char* description;
  SupportFn supports;
};

constexpr Variant kVariants[] = {
    {Op::allreduce, "basic_linear", &mpi_library::allreduce, "linear reduce to rank 0, then linear broadcast", nullptr},
    {Op::allreduce, "nonoverlapping", &mpi_library::allreduce, "tuned reduce, then tuned broadcast", nullptr},
    {Op::allreduce, "recursive_doubling", &mpi_library::allreduce, "recursive doubling (extra ranks folded in)", nullptr},
    {Op::allreduce, "ring", &mpi_library::allreduce, "ring reduce-scatter + ring allgather", &count_at_least_ranks},
    {Op::allreduce, "segmented_ring", &mpi_library::allreduce, "ring pipelined in --segment segments", &segmented_ring},
    {Op::allreduce, "rabenseifner", &mpi_library::allreduce, "recursive-halving reduce-scatter + recursive-doubling allgather", &rabenseifner},
    {Op::broadcast, "basic_linear", &mpi_library::bcast, "the root sends to every rank", nullptr},
    {Op::broadcast, "chain", &mpi_library::bcast, "chains (coll_tuned_bcast_algorithm_chain_fanout of them)", nullptr},
    {Op::broadcast, "pipeline", &mpi_library::bcast, "one chain, segments pipelined", nullptr},
    {Op::broadcast, "split_binary_tree", &mpi_library::bcast, "halves down two binary subtrees, then exchanged", &two_elements},
    {Op::broadcast, "binary_tree", &mpi_library::bcast, "binary tree", nullptr},
    {Op::broadcast, "binomial", &mpi_library::bcast, "binomial tree", nullptr},
    {Op::broadcast, "knomial", &mpi_library::bcast, "k-nomial tree (radix coll_tuned_bcast_algorithm_knomial_radix)", nullptr},
    {Op::broadcast, "scatter_allgather", &mpi_library::bcast, "binomial scatter + recursive-doubling allgather", &count_at_least_ranks},
    {Op::broadcast, "scatter_allgather_ring", &mpi_library::bcast, "binomial scatter + ring allgather", &count_at_least_ranks},
    {Op::allgather, "linear", &mpi_library::allgather, "gather to rank 0, then broadcast", nullptr},
    {Op::allgather, "bruck", &mpi_library::allgather, "Bruck's algorithm", nullptr},
    {Op::allgather, "recursive_doubling", &mpi_library::allgather, "recursive doubling", &power_of_two},
    {Op::allgather, "ring", &mpi_library::allgather, "ring", nullptr},
    {Op::allgather, "neighbor", &mpi_library::allgather, "neighbor exchange", &even},
    {Op::allgather, "two_proc", &mpi_library::allgather, "one exchange between 2 ranks", &two_ranks},
    {Op::reduce_scatter, "basic_linear", &mpi_library::reduce_scatter, "reduce to rank 0, then scatter", nullptr},
    {Op::reduce_scatter, "recursive_doubling", &mpi_library::reduce_scatter, "recursive doubling", nullptr},
    {Op::reduce_scatter, "recursive_halving", &mpi_library::reduce_scatter, "recursive halving", nullptr},
    {Op::reduce_scatter, "butterfly", &mpi_library::reduce_scatter, "butterfly", nullptr},
};

std::string algorithm_var(Op op) { return "coll_tuned_" + std::string(mpi_library::tuned_name(op)) + "_algorithm"; }

// The communicator the variant runs on: every rank of `t`, made on the first call with the
// algorithm forced (and the segment, when --segment gives one: a communicator per segment).
Transport& forced_transport(Transport& t, const Variant& v, const CollArgs& a) {
  mpi_library::mpi(t);
  std::string name = "library/tuned/" + algorithm_var(v.op) + "=" + v.name;
  if (a.segment_bytes) name += "/segment=" + std::to_string(a.segment_bytes);
  if (t.has_split(name)) return *t.split(name, 0, t.rank());
  const std::string var = algorithm_var(v.op);
  const auto index = ompi::cvar_index(var);
  if (!index)
    throw NotSupported("library:" + std::string(v.name) + " is Open MPI's coll/tuned algorithm: this MPI has no " + var,
                       t.error_context());
  const auto value = ompi::enum_value(*index, v.name);
  if (!value)
    throw NotSupported("this Open MPI's " + var + " has no algorithm '" + v.name + "'", t.error_context());
  std::optional<ompi::ScopedMcaValue<bool>> dynamic;  // already on when the launch said so (--mca)
  if (ompi::cvar_text("coll_tuned_use_dynamic_rules") != "true")
    dynamic.emplace("coll", "tuned", "use_dynamic_rules", true, t);
  const ompi::ScopedCvar algorithm(*index, *value, t);
  std::optional<ompi::ScopedCvar> segment;
  if (a.segment_bytes) {
    const auto seg = ompi::cvar_index(var + "_segmentsize");
    if (!seg) throw NotSupported("this Open MPI has no " + var + "_segmentsize", t.error_context());
    segment.emplace(*seg, static_cast<int>(a.segment_bytes), t);
  }
  return *t.split(name, 0, t.rank());
}

template <std::size_t I>
void run(Transport& t, const CollArgs& a) {
  kVariants[I].call(forced_transport(t, kVariants[I], a), a);
}

template <std::size_t I>
Why supports(int n, const CollArgs& a) {
  if (n < 2) return "at 1 rank Open MPI's coll/self serves every collective: coll/tuned's algorithms do not run";
  if constexpr (kVariants[I].supports == nullptr) return std::nullopt;
  else return kVariants[I].supports(n, a);
}

// What the variant's communicator was made with: the switch, the algorithm, and the
// algorithm's other coll/tuned parameters as they stand (the segment: --segment when set).
// From the variant, not the entry's name: --algo auto runs this entry renamed "auto".
template <std::size_t I>
LibraryConfig config(const AlgoEntry& e, const CollArgs& a) {
  const std::string var = algorithm_var(e.op);
  LibraryConfig c{{"coll_tuned_use_dynamic_rules", "true"}, {var, kVariants[I].name}};
  for (const char* suffix : {"_segmentsize", "_tree_fanout", "_chain_fanout", "_knomial_radix"}) {
    if (a.segment_bytes && std::string_view(suffix) == "_segmentsize") {
      c.emplace_back(var + suffix, std::to_string(a.segment_bytes));
      continue;
    }
    if (auto v = ompi::cvar_text(var + suffix)) c.emplace_back(var + suffix, *v);
  }
  return c;
}

template <std::size_t... I>
bool register_all(std::index_sequence<I...>) {
  (Registry::add(AlgoEntry{kVariants[I].op, std::string("library:") + kVariants[I].name, "mpi",
                           std::string(mpi_library::call_name(kVariants[I].op)) + " with Open MPI coll/tuned's " + kVariants[I].name +
                               " forced: " + kVariants[I].description,
                           "Open MPI (coll/tuned), world size >= 2; any root, any count below 2^31 elements", &run<I>,
                           &supports<I>, nullptr, false, &config<I>, /*on_request=*/true}),
   ...);
  return true;
}

[[maybe_unused]] const bool registered = register_all(std::make_index_sequence<std::size(kVariants)>{});

}  // namespace
}  // namespace collbench
