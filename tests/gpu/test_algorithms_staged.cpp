// Every custom (op, algo) on "device" memory without a GPU: FakeDeviceMemory buffers (whose
// copies and reductions are queued like stream work until a synchronisation), moved
// by the staging transport over the thread transport — and again with NCCL's matching and
// launch rules (NcclModelTransport) under the staging layer. World sizes 1..5, the small-count
// cross product of tests/common/cases.hpp, verified exactly by verify::run_checked.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <optional>

#include "collectives/gpu/staging_transport.hpp"
#include "collectives/registry.hpp"
#include "collectives/backends/thread/thread_transport.hpp"
#include "common/cases.hpp"
#include "gpu/fake_device_memory.hpp"
#include "gpu/nccl_model.hpp"

namespace collbench {
namespace {

enum class Stack { staging, nccl_model };

// unit.gpu runs the staging stack, unit.gpu_nccl_model the NCCL-model one (gtest filters).

struct Param {
  const AlgoEntry* entry;
  int world;
  Stack stack;
};

std::vector<Param> all_params() {
  std::vector<Param> out;
  for (const AlgoEntry& e : Registry::get().all())
    if (e.backend == "any")
      for (Stack s : {Stack::staging, Stack::nccl_model})
        for (int n = 1; n <= 5; ++n) out.push_back({&e, n, s});
  return out;
}

// One rank's device stack: fake device memory + host staging + staging transport over the
// thread transport (optionally through the NCCL model). Declaration order = teardown order.
struct DeviceRank {
  DeviceRank(ThreadTransport& t, Stack s) {
    Transport* host = &t;
    if (s == Stack::nccl_model) host = &model.emplace(t);
    // Device peer memory on the staging stack, as --backend mpi has CUDA IPC; NCCL has none.
    staged.emplace(*host, device, staging, s == Stack::staging ? ipc : nullptr);
  }
  testing::FakeDeviceMemory device{/*asynchronous=*/true};  // copies and kernels queued like stream work
  std::shared_ptr<testing::FakeIpc> ipc = std::make_shared<testing::FakeIpc>(device);
  HostMemory staging;
  std::optional<testing::NcclModelTransport> model;
  std::optional<gpu::StagingTransport> staged;
};

class StagedAlgorithm : public ::testing::TestWithParam<Param> {};

TEST_P(StagedAlgorithm, SmallCountsOnDeviceMemory) {
  const AlgoEntry* e = GetParam().entry;  // not a structured binding: clang 14 cannot capture one
  const int n = GetParam().world;
  const Stack stack = GetParam().stack;
  testing::CaseSpace space{testing::small_counts(n), testing::dtypes_to_check(), testing::redops_to_check()};
  std::vector<std::string> failures;
  std::mutex mu;
  ThreadWorld w(n);
  w.run([&](ThreadTransport& tt) {
    DeviceRank r(tt, stack);
    gpu::StagingTransport& t = *r.staged;
    // A deadlock under NCCL's rules shows up as a timeout: keep it short (cases take ms).
    t.scope().set_timeout(std::chrono::seconds(stack == Stack::nccl_model ? 5 : 30));
    for (const verify::Case& c : testing::expand(e->op, n, t.rank(), space)) {
      t.scope().set_call({std::string(op_name(e->op)), e->algo, c.count * dtype_size(c.dtype), -1, "test"});
      // A segment of 64 bytes on half the cases: many pipeline steps through the staging pool.
      const std::size_t segment = (c.count % 2) ? 64 : 0;
      const verify::Outcome o = verify::run_checked(t, *e, c, segment);
      if (o.skipped && e->algo == "shm" && stack == Stack::staging) {  // device peer memory is there
        std::lock_guard lk(mu);
        failures.push_back(testing::describe(c) + " skipped: " + o.skip_reason);
      }
      if (o.check.wrong) {
        std::lock_guard lk(mu);
        failures.push_back(testing::describe(c) + " rank " + std::to_string(t.rank()) + ": " +
                           std::to_string(o.check.wrong) + " wrong, first at " + std::to_string(o.check.first_index) +
                           " expected " + std::to_string(o.check.expected) + " got " + std::to_string(o.check.got));
      }
    }
    r.staged.reset();  // frees its scratch buffers and peer memory
    EXPECT_EQ(r.device.live(), 0u) << "device buffers leaked";
    EXPECT_EQ(r.ipc->opened(), r.ipc->closed()) << "peer memory aliases left open";
  });
  for (std::size_t i = 0; i < failures.size() && i < 20; ++i) ADD_FAILURE() << failures[i];
  EXPECT_TRUE(failures.empty()) << failures.size() << " failing (case, rank) pairs";
}

// The zero-copy algorithms with their device buffers registered in device peer memory (what
// --buffers registered does on --device cuda): peers' copies and reduce "kernels" read the
// buffers in place through their aliases, and nothing is staged.
class RegisteredOnDevice : public ::testing::TestWithParam<testing::AlgoAtWorld> {};

TEST_P(RegisteredOnDevice, ExactOnEveryCase) {
  const AlgoEntry* e = GetParam().entry;  // not a structured binding: clang 14 cannot capture one
  const int n = GetParam().world;
  const testing::CaseSpace cs = testing::registered_case_space(n);
  ThreadWorld w(n);
  w.run([&](ThreadTransport& tt) {
    DeviceRank r(tt, Stack::staging);
    gpu::StagingTransport& t = *r.staged;
    PeerMemory* pm = t.peer_memory();
    ASSERT_NE(pm, nullptr);
    EXPECT_EQ(pm->kind(), MemoryKind::cuda);
    {
      PeerMemorySpace space(*pm, t.memory());
      ASSERT_TRUE(testing::exact_on_every_case(t, *e, testing::expand(e->op, n, t.rank(), cs), &space));
    }
    r.staged.reset();
    EXPECT_EQ(r.device.live(), 0u) << "device buffers leaked";
    EXPECT_EQ(r.ipc->opened(), r.ipc->closed()) << "peer memory aliases left open";
  });
}

INSTANTIATE_TEST_SUITE_P(Shm, RegisteredOnDevice, ::testing::ValuesIn(testing::host_algorithms_at({1, 2, 3, 4}, "shm")),
                         testing::algo_at_world_name);

INSTANTIATE_TEST_SUITE_P(Registry, StagedAlgorithm, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<Param>& i) {
                           std::string name = i.param.stack == Stack::staging ? "staging_" : "ncclmodel_";
                           name += op_name(i.param.entry->op);
                           name += "_" + i.param.entry->algo + "_n" + std::to_string(i.param.world);
                           return name;
                         });

}  // namespace
}  // namespace collbench
