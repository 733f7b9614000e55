// gloo_backend.hpp for builds without Gloo: the backend reports itself absent, clearly.
#include "collectives/backends/gloo/gloo_backend.hpp"

#include "collectives/core/error.hpp"

namespace collbench::gloo_backend {

bool built() { return false; }
std::string library_version() { return {}; }
std::unique_ptr<Backend> make(const BackendContext&) {
  throw Error("collbench was built without Gloo (--backend gloo unavailable)");
}

}  // namespace collbench::gloo_backend
