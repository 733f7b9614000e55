// Device peer memory on the thread transport with fake device memory (asynchronous, like a
// CUDA stream) and FakeIpc: blocks are device allocations every peer reaches through its own
// alias, flags live in the host peer memory, a raise publishes the work the rank queued, and
// every alias is closed and every block freed when the peer memory goes. The zero-copy
// algorithms on it: tests/gpu/test_algorithms_staged.cpp.
#include <gtest/gtest.h>

#include <memory>

#include "collectives/transport/device_peer_memory.hpp"
#include "collectives/backends/thread/thread_transport.hpp"
#include "gpu/fake_device_memory.hpp"

namespace collbench {
namespace {

struct DeviceRank {
  explicit DeviceRank(ThreadTransport& t)
      : ipc(std::make_shared<testing::FakeIpc>(device)),
        pm(std::make_unique<DevicePeerMemory>(t, *t.peer_memory(), device, ipc)) {}
  testing::FakeDeviceMemory device{/*asynchronous=*/true};
  std::shared_ptr<testing::FakeIpc> ipc;
  std::unique_ptr<DevicePeerMemory> pm;
};

TEST(DevicePeerMemory, BlocksAreDeviceMemoryEveryPeerReaches) {
  for (int n : {1, 2, 3, 5}) {
    ThreadWorld w(n);
    w.run([&](ThreadTransport& t) {
      DeviceRank r(t);
      EXPECT_EQ(r.pm->kind(), MemoryKind::cuda);
      auto* a = static_cast<int*>(r.pm->allocate(64 * sizeof(int)));
      EXPECT_TRUE(r.pm->owns(a + 8, 4 * sizeof(int)));
      const int mine[2] = {100 + t.rank(), 200 + t.rank()};
      r.device.upload(a + 8, mine, sizeof mine);
      t.barrier();
      for (int q = 0; q < n; ++q) {
        int got[2] = {};
        r.device.download(got, r.pm->peer(a + 8, q), sizeof got);  // q's block through this rank's alias
        EXPECT_EQ(got[0], 100 + q);
        EXPECT_EQ(got[1], 200 + q);
      }
      EXPECT_EQ(r.ipc->opened(), n - 1);
      t.barrier();
      r.pm.reset();
      EXPECT_EQ(r.ipc->closed(), n - 1) << "every alias closed";
      EXPECT_EQ(r.device.live(), 0u) << "every device block freed";
    });
  }
}

// Rank 0 queues a copy into its block and raises its flag; rank 1 reads the block as soon as
// it sees the flag. Without the raise's publish (a stream synchronisation) the queued copy has
// not run and rank 1 reads zeros.
TEST(DevicePeerMemory, RaisePublishesQueuedDeviceWork) {
  ThreadWorld w(2);
  w.run([&](ThreadTransport& t) {
    DeviceRank r(t);
    const int zeros[4] = {};
    auto* block = static_cast<int*>(r.pm->allocate(sizeof zeros));
    auto* src = static_cast<int*>(r.device.allocate(sizeof zeros));
    r.device.upload(block, zeros, sizeof zeros);
    const int data[4] = {7, 8, 9, 10};
    r.device.upload(src, data, sizeof data);
    const std::uint64_t base = r.pm->begin_call();
    if (t.rank() == 0) {
      r.device.copy(block, src, sizeof data);  // queued
      EXPECT_GT(r.device.queued(), 0u);
      r.pm->raise(base + 1);
      EXPECT_EQ(r.device.queued(), 0u) << "the raise waited for the queued copy";
    } else {
      r.pm->wait(0, base + 1);
      int got[4] = {};
      std::memcpy(got, r.device.host_view(r.pm->peer(block, 0), sizeof got), sizeof got);  // read outside the stream
      EXPECT_EQ(got[0], 7);
      EXPECT_EQ(got[3], 10);
    }
    r.pm->end_call(base, true);
    r.device.deallocate(src);
  });
}

TEST(DevicePeerMemory, FlagsLiveInHostPeerMemory) {
  ThreadWorld w(3);
  w.run([&](ThreadTransport& t) {
    DeviceRank r(t);
    const std::uint64_t base = r.pm->begin_call();  // allocates the flags: host memory, not a device block
    EXPECT_EQ(r.device.allocations(), 0u);
    r.pm->raise(base + 1);
    r.pm->wait_all(base + 1);
    r.pm->end_call(base, true);
  });
}

}  // namespace
}  // namespace collbench
