// Open MPI's hierarchical component, coll/han, as a library variant ("han"). Built for Open MPI
// only (COLLBENCH_MPI=openmpi): another MPI has no coll/han, and --algo han is then unknown.
#include <optional>
#include <string>
#include <string_view>

#include "collectives/backends/mpi/mpi_library.hpp"
#include "collectives/backends/mpi/mpi_ompi_vars.hpp"

namespace collbench::mpi_han {
namespace {

using namespace mpi_library;

// Node-aware, and ranked next to the library's own choice (registry.hpp AlgoTraits).
// Open MPI 4.1 ships coll/han at priority 0, below coll/tuned, so MPI_Allreduce never uses it
// unless the whole job says --mca coll_han_priority 100. A communicator picks its components
// when it is made, so "han" runs the same MPI calls on a communicator of its own, made once
// (in the warm-up) with han's priority raised for that moment only: han and the default
// component can then alternate in one interleaved run, the fair baseline for the node-aware
// algorithms. coll_han_priority is read-only to MPI_T, so it is raised through Open MPI's MCA
// variable store (mpi_ompi_vars.hpp).
constexpr int kHanPriority = 100;
// The communicator han serves: every rank of `t`, made on the first call.
Transport& han_transport(Transport& t) {
  constexpr std::string_view kName = "library/han";
  mpi_library::mpi(t);  // not the namespace collbench::mpi (quiet_comm.hpp)
  // han splits by node itself and declines (falls back to tuned) within one node.
  if (t.node_layout().nodes() < 2)
    throw NotSupported("han is a hierarchical component: Open MPI uses it only across nodes", t.error_context());
  std::optional<ompi::ScopedMcaValue<int>> raised;  // only while the communicator is made
  if (!t.has_split(kName)) raised.emplace("coll", "han", "priority", kHanPriority, t);
  return *t.split(kName, 0, t.rank());
}

template <void (*Call)(Transport&, const CollArgs&)>
void on_han(Transport& t, const CollArgs& a) {
  Transport& h = han_transport(t);
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
  // 4.1's han offsets MPI_IN_PLACE as if it were a buffer in its reduce tasks: past one
  // segment the process dies at address 0x10001 (measured: a 2x2 allreduce of 30 MiB; fixed
  // in 5.0, open-mpi/ompi#11488 and #11800).
  if ((Call == &allreduce || Call == &reduce) && a.send == a.recv)
    throw NotSupported("Open MPI 4.1's coll/han crashes on MPI_IN_PLACE reduce/allreduce (fixed in 5.0): in place refused",
                       t.error_context());
#endif
  Call(h, a);
}

LibraryConfig han_config(const AlgoEntry&, const CollArgs&) {
  return {{"coll_han_priority", std::to_string(kHanPriority)}};  // while its communicator was made
}

constexpr const char* kHan = "Open MPI only, at least 2 nodes; any root, any count below 2^31 elements";
COLLBENCH_REGISTER({Op::broadcast, "han", "mpi", "MPI_Bcast served by Open MPI's coll/han (node-aware)", kHan, &on_han<bcast>, nullptr, nullptr, false, &han_config}, AlgoTraits{.node_aware = true, .simplicity_rank = 10});
COLLBENCH_REGISTER({Op::reduce, "han", "mpi", "MPI_Reduce served by Open MPI's coll/han (node-aware)", kHan, &on_han<reduce>, nullptr, nullptr, false, &han_config}, AlgoTraits{.node_aware = true, .simplicity_rank = 10});
COLLBENCH_REGISTER({Op::allreduce, "han", "mpi", "MPI_Allreduce served by Open MPI's coll/han (node-aware)", kHan, &on_han<allreduce>, nullptr, nullptr, false, &han_config}, AlgoTraits{.node_aware = true, .simplicity_rank = 10});
COLLBENCH_REGISTER({Op::allgather, "han", "mpi", "MPI_Allgather served by Open MPI's coll/han (node-aware)", kHan, &on_han<allgather>, nullptr, nullptr, false, &han_config}, AlgoTraits{.node_aware = true, .simplicity_rank = 10});

}  // namespace
}  // namespace collbench::mpi_han
