// The Gloo backend: the library PyTorch runs collectives with on CPUs ("cpu:gloo"). Its
// measured transport is Gloo's TCP pairs through unbound buffers (gloo_transport.hpp), its
// library entries are the calls ProcessGroupGloo makes and Gloo's other algorithms
// (gloo_library.cpp). Its ranks start under torchrun, srun, collbench --spawn (collectives/
// launch/, over gloo_control.cpp's mesh) or mpirun (the World is then MPI's, and Gloo's
// contexts are connected by swapping addresses over it). Registered by gloo_registration.cpp.
#include <gloo/config.h>
#include <gloo/context.h>
#include <gloo/transport/device.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <span>

#include "collectives/backends/backend.hpp"
#include "collectives/backends/gloo/gloo_backend.hpp"
#include "collectives/backends/gloo/gloo_mesh.hpp"
#include "collectives/backends/gloo/gloo_world.hpp"

namespace collbench {
namespace {

// Every rank's bytes over any World: the lengths first (addresses have one size per transport,
// but nothing here relies on it), then the bytes padded to the longest.
std::vector<std::vector<char>> world_exchange(World& w, const std::vector<char>& mine) {
  const auto n = static_cast<std::size_t>(w.size());
  std::int64_t len = static_cast<std::int64_t>(mine.size());
  std::vector<std::int64_t> lens(n);
  w.allgather(std::as_bytes(std::span(&len, 1)), std::as_writable_bytes(std::span(lens)));
  std::int64_t longest = 0;
  for (auto l : lens) longest = std::max(longest, l);
  std::vector<char> padded(static_cast<std::size_t>(longest)), all(padded.size() * n);
  std::copy(mine.begin(), mine.end(), padded.begin());
  w.allgather(std::as_bytes(std::span(padded)), std::as_writable_bytes(std::span(all)));
  std::vector<std::vector<char>> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i].assign(all.begin() + static_cast<std::ptrdiff_t>(i * padded.size()),
                  all.begin() + static_cast<std::ptrdiff_t>(i * padded.size() + static_cast<std::size_t>(lens[i])));
  return out;
}

// Under mpirun there is no rendezvous host to route toward: rank 0 chooses its address by the
// usual rules, and every other rank chooses the route toward it.
gloo_mesh::DeviceChoice device_over(World& w) {
  std::array<char, 256> rank0{};
  gloo_mesh::DeviceChoice mine;
  if (w.rank() == 0) {
    mine = gloo_mesh::make_device("", std::getenv("GLOO_SOCKET_IFNAME"));
    std::strncpy(rank0.data(), mine.address.c_str(), rank0.size() - 1);
  }
  w.broadcast(std::as_writable_bytes(std::span(rank0)), 0);
  if (w.rank() != 0) mine = gloo_mesh::make_device(rank0.data(), std::getenv("GLOO_SOCKET_IFNAME"));
  return mine;
}

class GlooBackend final : public Backend {
 public:
  explicit GlooBackend(const BackendContext& ctx) {
    gloo_mesh::DeviceChoice d;
    if (auto* gw = dynamic_cast<GlooWorld*>(&ctx.world)) d = {gw->device(), gw->address(), gw->why()};
    else d = device_over(ctx.world);
    address_ = d.address;
    why_ = d.why;
    auto context = gloo_mesh::connect(ctx.world.rank(), ctx.world.size(), d.device,
                                      [&](const std::vector<char>& mine) { return world_exchange(ctx.world, mine); },
                                      ctx.scope->timeout());
    transport_ = std::make_unique<GlooTransport>(std::move(context), d.device, ctx.scope);
    // The library's contexts now, collectively, not inside the first library call.
    transport_->library_context(0);
    transport_->library_context(1);
  }
  Transport& transport() override { return *transport_; }
  void describe(Facts& f) const override {
    f.emplace_back("gloo", library_version());
    f.emplace_back("gloo_device", address_ + " (" + why_ + ")");
  }
  static std::string library_version() {
    return "Gloo " + std::to_string(GLOO_VERSION_MAJOR) + "." + std::to_string(GLOO_VERSION_MINOR) + "." +
           std::to_string(GLOO_VERSION_PATCH) + " (tcp transport)";
  }

 private:
  std::unique_ptr<GlooTransport> transport_;
  std::string address_;
  std::string why_;
};

}  // namespace

namespace gloo_backend {

bool built() { return true; }
std::string library_version() { return GlooBackend::library_version(); }
std::unique_ptr<Backend> make(const BackendContext& ctx) { return std::make_unique<GlooBackend>(ctx); }

}  // namespace gloo_backend
}  // namespace collbench
