// The gloo backend's registry entry, in every build: without Gloo it says why it is unavailable.
#include "collectives/backends/backend.hpp"
#include "collectives/backends/gloo/gloo_backend.hpp"

namespace collbench {
namespace {

COLLBENCH_REGISTER_BACKEND(BackendInfo{
    "gloo",
    "Gloo (PyTorch's CPU library): TCP pairs through unbound buffers, and Gloo's own collectives; started by "
    "torchrun, srun, --spawn N or mpirun",
    {"torchrun", "srun", "mpi", "spawn"},
    {"cpu"},
    {"gloo", "gloo_device"},
    false,
    [](std::string_view) -> std::string {
      return gloo_backend::built() ? std::string()
                                   : "--backend gloo: collbench was built without Gloo (Debian: libgloo-dev, then "
                                     "rebuild); accepted: --backend mpi";
    },
    gloo_backend::make,
    gloo_backend::library_version});

}  // namespace
}  // namespace collbench
