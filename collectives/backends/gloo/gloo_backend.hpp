#pragma once
// The Gloo backend's two builds: with Gloo (gloo_backend.cpp) and without it (gloo_none.cpp,
// where the backend still registers and says why it is unavailable, as NCCL's does).
#include <memory>
#include <string>

#include "collectives/backends/backend.hpp"

namespace collbench::gloo_backend {

bool built();
std::string library_version();  // "Gloo 0.5.0 (tcp transport)"; "" without Gloo
std::unique_ptr<Backend> make(const BackendContext& ctx);

}  // namespace collbench::gloo_backend
