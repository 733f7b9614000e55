// The staging transport and the NCCL launch/matching model, without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <optional>

#include "collectives/gpu/ordered_transport.hpp"
#include "collectives/gpu/staging_transport.hpp"
#include "collectives/registry.hpp"
#include "collectives/backends/thread/thread_transport.hpp"
#include "collectives/verify/check.hpp"
#include "gpu/fake_device_memory.hpp"
#include "gpu/nccl_model.hpp"
#include "transport/split_checks.hpp"

namespace collbench {
namespace {

using namespace std::chrono_literals;
using testing::FakeDeviceMemory;
using testing::NcclModelTransport;

// Counts allocations, so a test can see the timed path allocates nothing.
class CountingHost final : public MemorySpace {
 public:
  MemoryKind kind() const override { return MemoryKind::host; }
  void* allocate(std::size_t b) override {
    ++count;
    return host.allocate(b);
  }
  void deallocate(void* p) noexcept override { host.deallocate(p); }
  void copy(void* d, const void* s, std::size_t b) override { host.copy(d, s, b); }
  void reduce(const ReduceOp& op, void* o, const void* a, const void* b, std::size_t n) override {
    host.reduce(op, o, a, b, n);
  }
  void upload(void* d, const void* s, std::size_t b) override { host.copy(d, s, b); }
  void download(void* d, const void* s, std::size_t b) override { host.copy(d, s, b); }
  void synchronize() override { ++syncs; }
  HostMemory host;
  int count = 0;
  int syncs = 0;
};

TEST(StagingTransport, MovesDeviceBuffersThroughHostStaging) {
  ThreadWorld w(2);
  w.run([](ThreadTransport& tt) {
    FakeDeviceMemory dev;
    HostMemory staging;
    gpu::StagingTransport t(tt, dev, staging);
    EXPECT_EQ(&t.memory(), &dev);
    EXPECT_EQ(t.backend(), "thread");
    Buffer b(dev, 64);
    std::array<int, 16> h{};
    if (t.rank() == 0) {
      for (int i = 0; i < 16; ++i) h[i] = i * 3;
      dev.upload(b.data(), h.data(), 64);
      t.send(b.data(), 64, 1, 5);
    } else {
      t.recv(b.data(), 64, 0, 5);
      dev.download(h.data(), b.data(), 64);
      for (int i = 0; i < 16; ++i) EXPECT_EQ(h[i], i * 3);
    }
  });
}

TEST(StagingTransport, ReusesStagingBuffersAfterWarmup) {
  const AlgoEntry* e = Registry::get().find(Op::broadcast, "naive", "any");
  ASSERT_NE(e, nullptr);
  ThreadWorld w(3);
  w.run([&](ThreadTransport& tt) {
    FakeDeviceMemory dev;
    CountingHost staging;
    gpu::StagingTransport t(tt, dev, staging);
    const verify::Case c{Op::broadcast, DType::float32, RedOp::sum, 1000, 0, t.rank(), 3, false};
    EXPECT_EQ(verify::run_checked(t, *e, c).check.wrong, 0u);  // warm-up
    const int after_warmup = staging.count;
    EXPECT_GT(after_warmup, 0);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(verify::run_checked(t, *e, c).check.wrong, 0u);
    EXPECT_EQ(staging.count, after_warmup) << "staging buffers allocated on the timed path";
    EXPECT_EQ(t.staging_allocations(), static_cast<std::size_t>(after_warmup));
  });
}

TEST(StagingTransport, TimeoutNamesPeerAndCallContext) {
  ThreadWorld w(2);
  try {
    w.run([](ThreadTransport& tt) {
      FakeDeviceMemory dev;
      HostMemory staging;
      gpu::StagingTransport t(tt, dev, staging);
      t.scope().set_timeout(200ms);
      t.scope().set_call({"allreduce", "ring", 4096, 7, "timed"});
      Buffer b(dev, 16);
      if (t.rank() == 0) t.recv(b.data(), 16, 1, 3);  // rank 1 never sends
    });
    FAIL() << "expected a timeout";
  } catch (const TimeoutError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("peer=1"), std::string::npos) << what;
    EXPECT_NE(what.find("op=allreduce algo=ring size=4096"), std::string::npos) << what;
    EXPECT_NE(what.find("iteration=7"), std::string::npos) << what;
  }
}

TEST(StagingTransport, ZeroByteMessagesNeedNoStaging) {
  ThreadWorld w(2);
  w.run([](ThreadTransport& tt) {
    FakeDeviceMemory dev;
    CountingHost staging;
    gpu::StagingTransport t(tt, dev, staging);
    Buffer b(dev, 8);
    t.sendrecv(b.data(), 0, 1 - t.rank(), b.data(), 0, 1 - t.rank(), 1);
    EXPECT_EQ(staging.count, 0);
  });
}

// CUDA-aware MPI path: every send and every receive waits for the memory space's stream first.
TEST(StreamOrderedTransport, SynchronizesBeforeEachSendAndReceive) {
  ThreadWorld w(2);
  w.run([](ThreadTransport& tt) {
    CountingHost dev;
    gpu::StreamOrderedTransport t(tt, dev);
    EXPECT_EQ(&t.memory(), &dev);
    int x = t.rank();
    int y = -1;
    t.sendrecv(&x, sizeof x, 1 - t.rank(), &y, sizeof y, 1 - t.rank(), 4);
    EXPECT_EQ(y, 1 - t.rank());
    EXPECT_EQ(dev.syncs, 2);  // the receive, then the send
  });
}

// Wrappers split their inner transport and wrap the sub-transport the same way: an algorithm
// runs on a staged sub-transport, and ordered sub-transports still synchronize before sends
// and receives.
TEST(StagingTransport, SubTransportsAreStagedToo) {
  const AlgoEntry* e = Registry::get().find(Op::allreduce, "ring", "any");
  ASSERT_NE(e, nullptr);
  ThreadWorld w(5);
  w.run([&](ThreadTransport& tt) {
    tt.scope().set_timeout(20s);
    FakeDeviceMemory dev;
    HostMemory staging;
    gpu::StagingTransport t(tt, dev, staging);
    Transport* sub = t.split("mod2", t.rank() % 2, t.rank());
    ASSERT_NE(sub, nullptr);
    ASSERT_NE(dynamic_cast<gpu::StagingTransport*>(sub), nullptr);
    EXPECT_EQ(&sub->memory(), &dev);
    const verify::Case c{Op::allreduce, DType::float32, RedOp::sum, 1001, 0, sub->rank(), sub->size(), false};
    EXPECT_EQ(verify::run_checked(*sub, *e, c).check.wrong, 0u);
  });
}

TEST(StreamOrderedTransport, SubTransportsSynchronizeBeforeSendsAndReceives) {
  ThreadWorld w(4);
  w.run([](ThreadTransport& tt) {
    CountingHost dev;
    gpu::StreamOrderedTransport t(tt, dev);
    Transport* pair = t.split("pairs", t.rank() / 2, 0);
    ASSERT_NE(pair, nullptr);
    int x = t.rank(), y = -1;
    pair->sendrecv(&x, sizeof x, 1 - pair->rank(), &y, sizeof y, 1 - pair->rank(), 4);
    EXPECT_EQ(y, t.rank() ^ 1);
    EXPECT_EQ(dev.syncs, 2);
  });
}

TEST(FakeDeviceMemory, RejectsOutOfBoundsAndOverlap) {
  FakeDeviceMemory dev;
  Buffer a(dev, 64), b(dev, 64);
  char h[128] = {};
  EXPECT_THROW(dev.upload(a.data(), h, 65), std::logic_error);
  EXPECT_THROW(dev.copy(a.bytes_ptr() + 8, a.data(), 16), std::logic_error);
  EXPECT_NO_THROW(dev.copy(b.data(), a.data(), 64));
  EXPECT_NO_THROW(dev.upload(a.bytes_ptr() + 60, h, 4));
}

// NCCL timings: waits launch groups without waiting for the stream; the host drains once per
// sample (memory().synchronize()), so a batch of N ops pays one synchronisation, as in
// nccl-tests. Checked on the model, which shares GroupedTransport and DrainingMemory with
// NcclTransport; that NcclTransport::run_group itself no longer waits needs a GPU (gpu label).
TEST(NcclModel, DrainsOncePerSampleNotPerWait) {
  const AlgoEntry* e = Registry::get().find(Op::allreduce, "ring", "any");
  ASSERT_NE(e, nullptr);
  ThreadWorld w(3);
  w.run([&](ThreadTransport& tt) {
    NcclModelTransport t(tt);
    MemorySpace& host = tt.memory();
    Buffer send(host, 3000 * sizeof(float)), recv(host, 3000 * sizeof(float));
    std::fill_n(static_cast<float*>(send.data()), 3000, 1.0f);
    Workspace ws(t.memory());
    CollArgs a;
    a.send = send.data();
    a.recv = recv.data();
    a.count = 3000;
    a.op = {RedOp::sum, DType::float32, host_reduce_fn(RedOp::sum, DType::float32)};
    a.workspace = &ws;
    for (int k = 0; k < 4; ++k) e->run(t, a);  // one batched sample
    EXPECT_EQ(t.drains(), 0) << "a wait drained the stream on the host";
    t.memory().synchronize();
    EXPECT_EQ(t.drains(), 1);
    EXPECT_GE(t.groups_launched(), 4 * 2 * 2);  // ring: 2 (n - 1) steps per op
    EXPECT_EQ(static_cast<float*>(recv.data())[2999], 3.0f);
    float x = 0;
    t.memory().download(&x, recv.data(), sizeof x);  // verification reads drain first too
    EXPECT_EQ(t.drains(), 2);
  });
}

// The launch model: waiting on one request launches every recorded op as one group. Rank 1
// receives before it sends; if rank 0's wait on its receive launched only that receive, its
// send would never start and both ranks would hang.
TEST(NcclModel, WaitOnSubsetLaunchesEveryPendingOp) {
  ThreadWorld w(2);
  w.run([](ThreadTransport& tt) {
    NcclModelTransport t(tt);
    t.scope().set_timeout(5s);
    int out = 10 + t.rank(), in = -1;
    if (t.rank() == 0) {
      Request s = t.isend(&out, sizeof out, 1, 0);
      Request r = t.irecv(&in, sizeof in, 1, 0);
      t.wait(r);
      EXPECT_EQ(t.groups_launched(), 1);
      t.wait(s);  // already complete: no new group
      EXPECT_EQ(t.groups_launched(), 1);
    } else {
      t.recv(&in, sizeof in, 0, 0);
      t.send(&out, sizeof out, 0, 0);
    }
    EXPECT_EQ(in, 10 + (1 - t.rank()));
  });
}

TEST(NcclModel, TagsDoNotReorderMessages) {
  ThreadWorld w(2);
  EXPECT_THROW(w.run([](ThreadTransport& tt) {
                 NcclModelTransport t(tt);
                 t.scope().set_timeout(5s);
                 int a = 1, b = 2;
                 if (t.rank() == 0) {
                   std::array<Request, 2> rs{t.isend(&a, 4, 1, 1), t.isend(&b, 4, 1, 2)};
                   t.wait_all(rs);
                 } else {  // fine for MPI, wrong for NCCL
                   std::array<Request, 2> rs{t.irecv(&b, 4, 0, 2), t.irecv(&a, 4, 0, 1)};
                   t.wait_all(rs);
                 }
               }),
               TransportError);
}

TEST(NcclModel, SizesMustMatchExactly) {
  ThreadWorld w(2);
  EXPECT_THROW(w.run([](ThreadTransport& tt) {
                 NcclModelTransport t(tt);
                 t.scope().set_timeout(5s);
                 std::array<char, 8> buf{};
                 if (t.rank() == 0) t.send(buf.data(), 4, 1, 0);
                 else t.recv(buf.data(), 8, 0, 0);
               }),
               TransportError);
}

TEST(NcclModel, SplitContract) {
  for (int n : {1, 3, 6}) {
    ThreadWorld w(n);
    w.run([](ThreadTransport& tt) {
      tt.scope().set_timeout(20s);
      NcclModelTransport t(tt);
      testing::check_split_contract(t);
    });
  }
}

TEST(NcclModel, ZeroByteOpsCompleteWithoutALaunch) {
  ThreadWorld w(2);
  w.run([](ThreadTransport& tt) {
    NcclModelTransport t(tt);
    Request r = t.isend(nullptr, 0, 1 - t.rank(), 0);
    EXPECT_FALSE(r.active);
    t.wait(r);
    EXPECT_EQ(t.groups_launched(), 0);
  });
}

}  // namespace
}  // namespace collbench
