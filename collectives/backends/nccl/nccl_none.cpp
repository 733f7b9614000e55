// nccl_backend.hpp for builds without NCCL: the backend reports itself absent, clearly.
#include "collectives/backends/nccl/nccl_backend.hpp"

#include "collectives/core/error.hpp"

namespace collbench::nccl {

bool built() { return false; }
std::string version() { return {}; }
std::unique_ptr<Transport> make_transport(World&, MemorySpace&, std::shared_ptr<CallScope>) {
  throw Error("collbench was built without NCCL (--backend nccl unavailable)");
}

}  // namespace collbench::nccl
