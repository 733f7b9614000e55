// The harness's communicators (control, node discovery, the backend) and the waits of the ranks
// outside a measured pair leave no libnbc progress hook behind (quiet_comm.hpp); every library
// number measured after them would otherwise carry it. An executable of its own: the probe needs
// a process where nothing registered the hook before.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <memory>

#include "common/libnbc_probe.hpp"
#include "harness/measure/collective_point.hpp"
#include "harness/measure/p2p_point.hpp"
#include "harness/plan/pairs.hpp"
#include "harness/plan/run_config.hpp"
#include "collectives/backends/backend.hpp"
#include "collectives/backends/mpi/mpi_world.hpp"
#include "harness/runtime/control.hpp"
#include "harness/runtime/topology.hpp"

namespace collbench {
namespace {

using namespace std::chrono_literals;

TEST(QuietHarness, ControlBackendAndPairWaitsLeaveNoLibnbcHook) {
  COLLBENCH_EXPECT_LIBNBC_HOOK_ABSENT_BEFORE();
  auto scope = std::make_shared<CallScope>();
  scope->set_watched(true);  // as under the harness's watchdog: plain blocking waits
  scope->set_timeout(60s);
  MpiWorld world(MPI_COMM_WORLD);
  Control control(world, scope);
  const Topology topo = discover_topology(control);
  const BackendContext ctx{world, "cpu", scope, 0, 1, topo.host_of_rank.at(0), topo.node_of_rank};
  const auto backend = Backends::get().find("mpi")->make(ctx);
  PointEnv env{backend->transport(), control, topo, "mpi", "cpu", true};
  P2pBlock block;
  block.settings.iters = 4;
  block.settings.warmup = 1;
  block.settings.pairs = parse_pairs("all");  // with 3 ranks, one waits outside each pair
  const auto n = static_cast<std::size_t>(control.size());
  EXPECT_EQ(measure_p2p_size(env, block, SizePoint{8, 8, 8}).size(), n * (n - 1) / 2);
  EXPECT_EQ(testing::libnbc_progress_hook_registered(), false) << "the harness registered libnbc's progress hook";
}

}  // namespace
}  // namespace collbench
