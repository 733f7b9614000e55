#pragma once
// The bootstraps of ranks started without MPI — torchrun, srun (no MPI plugin) and collbench
// --spawn — registered here for every backend that lists them (gloo, nccl). Each reads its
// launcher's environment (launch_env.hpp), meets the other ranks through the rendezvous rank 0
// serves (rendezvous.hpp) and hands rank_main the World a control mesh made from that meeting.
//
// The mesh is the one piece that needs a transport library: the Gloo backend registers it
// (backends/gloo/gloo_control.cpp). A build without Gloo still knows these launchers and says,
// in one line, that they need it.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/backends/world.hpp"
#include "collectives/launch/launch_env.hpp"

namespace collbench::launch {

// Every rank's bytes (index = rank) from this rank's `mine`: the rendezvous. Collective.
using Exchange = std::function<std::vector<std::vector<std::byte>>(const std::vector<std::byte>& mine)>;

struct ControlMesh {
  std::string library;  // "Gloo", for messages
  // The address rank 0's rendezvous listens on so that ranks routing to `host` reach it ("":
  // every interface).
  std::function<std::string(const std::string& host)> listen_address;
  // This rank's control plane, connected through one exchange; gives up after `timeout`.
  std::function<std::unique_ptr<World>(const Spec& s, const Exchange& exchange, std::chrono::milliseconds timeout)> meet;
};

// Registered once, at load time, by the library that provides it (COLLBENCH_REGISTER_CONTROL_MESH).
struct ControlMeshRegistrar {
  explicit ControlMeshRegistrar(ControlMesh m);
};
#define COLLBENCH_REGISTER_CONTROL_MESH(...) \
  static const ::collbench::launch::ControlMeshRegistrar collbench_control_mesh_registrar(__VA_ARGS__)

// The registered mesh, or nullptr in a build without one.
const ControlMesh* control_mesh();

}  // namespace collbench::launch
