// The control mesh of ranks started without MPI (collectives/launch/bootstrap.hpp): a Gloo
// context whose pair addresses the ranks swap at the launch rendezvous, under a GlooWorld.
#include <cstdlib>
#include <cstring>

#include "collectives/backends/gloo/gloo_mesh.hpp"
#include "collectives/backends/gloo/gloo_world.hpp"
#include "collectives/launch/bootstrap.hpp"

namespace collbench {
namespace {

std::unique_ptr<World> meet(const launch::Spec& s, const launch::Exchange& exchange, std::chrono::milliseconds timeout) {
  auto d = gloo_mesh::make_device(s.host, std::getenv("GLOO_SOCKET_IFNAME"));
  const auto swap = [&](const std::vector<char>& mine) {
    std::vector<std::byte> bytes(mine.size());
    std::memcpy(bytes.data(), mine.data(), mine.size());
    std::vector<std::vector<char>> out;
    for (const auto& b : exchange(bytes)) {
      out.emplace_back(b.size());
      std::memcpy(out.back().data(), b.data(), b.size());
    }
    return out;
  };
  auto context = gloo_mesh::connect(s.rank, s.size, d.device, swap, timeout);
  auto scope = std::make_shared<CallScope>(kControlTransportTimeout);
  auto control = std::make_unique<GlooTransport>(std::move(context), d.device, std::move(scope));
  return std::make_unique<GlooWorld>(std::move(control), d.device, d.address, d.why);
}

COLLBENCH_REGISTER_CONTROL_MESH(launch::ControlMesh{"Gloo", gloo_mesh::route_source, meet});

}  // namespace
}  // namespace collbench
