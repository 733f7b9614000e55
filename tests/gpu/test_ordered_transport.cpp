// The stream-ordered transport (CUDA-aware MPI moving device buffers) on an asynchronous fake
// device: copies and reduce kernels wait in a queue until the stream is synchronised, and the
// inner transport reads and writes device memory directly, outside the stream, as CUDA-aware
// MPI does. A missing synchronisation before a send or a receive then gives wrong data.
#include <gtest/gtest.h>

#include <array>
#include <mutex>

#include "collectives/gpu/ordered_transport.hpp"
#include "collectives/registry.hpp"
#include "collectives/transport/forwarding_transport.hpp"
#include "collectives/backends/thread/thread_transport.hpp"
#include "common/cases.hpp"
#include "gpu/fake_device_memory.hpp"

namespace collbench {
namespace {

using testing::FakeDeviceMemory;

// A "CUDA-aware" transport: moves fake device buffers through their host bytes, unordered
// with the fake device's queue (the library knows nothing of the stream).
class DirectDeviceTransport final : public ForwardingTransport {
 public:
  DirectDeviceTransport(Transport& inner, FakeDeviceMemory& dev) : ForwardingTransport(inner), dev_(dev) {}
  MemorySpace& memory() override { return dev_; }
  Request isend(const void* buf, std::size_t bytes, int peer, int tag) override {
    return inner().isend(dev_.host_view(buf, bytes), bytes, peer, tag);
  }
  Request irecv(void* buf, std::size_t bytes, int peer, int tag) override {
    return inner().irecv(dev_.host_view(buf, bytes), bytes, peer, tag);
  }

 protected:
  // Sub-transports (the node-aware algorithms' groups) move device memory the same way.
  std::unique_ptr<Transport> wrap(Transport& inner_sub) override {
    return std::make_unique<DirectDeviceTransport>(inner_sub, dev_);
  }

 private:
  FakeDeviceMemory& dev_;
};

// The ring's pattern: a reduce kernel reading a scratch slot is queued, then the next
// receive into that slot is posted. The receive must not land before the kernel has read it.
TEST(StreamOrderedTransport, ReceiveWaitsForQueuedKernelsReadingItsBuffer) {
  ThreadWorld w(2);
  w.run([](ThreadTransport& tt) {
    FakeDeviceMemory dev(/*asynchronous=*/true);
    DirectDeviceTransport direct(tt, dev);
    gpu::StreamOrderedTransport t(direct, dev);
    Buffer acc(dev, 16), slot(dev, 16);
    std::array<int, 4> h{};
    if (t.rank() == 0) {
      h = {100, 200, 300, 400};
      dev.upload(slot.data(), h.data(), sizeof h);
      t.send(slot.data(), sizeof h, 1, 3);
      return;
    }
    h = {1, 2, 3, 4};
    dev.upload(acc.data(), h.data(), sizeof h);
    h = {10, 20, 30, 40};
    dev.upload(slot.data(), h.data(), sizeof h);
    const ReduceOp sum{RedOp::sum, DType::int32, host_reduce_fn(RedOp::sum, DType::int32)};
    dev.reduce(sum, acc.data(), acc.data(), slot.data(), 4);  // queued: reads slot = {10, 20, 30, 40}
    ASSERT_EQ(dev.queued(), 1u);
    t.recv(slot.data(), sizeof h, 0, 3);  // reuses the slot
    dev.download(h.data(), acc.data(), sizeof h);
    EXPECT_EQ(h, (std::array<int, 4>{11, 22, 33, 44})) << "the receive overwrote the slot before the kernel read it";
  });
}

TEST(StreamOrderedTransport, SendWaitsForQueuedKernelsWritingItsBuffer) {
  ThreadWorld w(2);
  w.run([](ThreadTransport& tt) {
    FakeDeviceMemory dev(/*asynchronous=*/true);
    DirectDeviceTransport direct(tt, dev);
    gpu::StreamOrderedTransport t(direct, dev);
    Buffer a(dev, 16), b(dev, 16);
    std::array<int, 4> h{7, 7, 7, 7};
    if (t.rank() == 0) {
      dev.upload(a.data(), h.data(), sizeof h);
      dev.copy(b.data(), a.data(), sizeof h);  // queued: b = {7, 7, 7, 7}
      t.send(b.data(), sizeof h, 1, 3);
    } else {
      t.recv(a.data(), sizeof h, 0, 3);
      dev.download(h.data(), a.data(), sizeof h);
      EXPECT_EQ(h, (std::array<int, 4>{7, 7, 7, 7}));
    }
  });
}

// Every custom algorithm, verified, on the asynchronous fake device through the ordered
// transport: the CUDA-aware MPI path of --backend mpi --device cuda.
class OrderedAlgorithm : public ::testing::TestWithParam<const AlgoEntry*> {};

TEST_P(OrderedAlgorithm, VerifiedOnAsynchronousDevice) {
  const AlgoEntry* e = GetParam();
  std::vector<std::string> failures;
  std::mutex mu;
  for (int n : {2, 3, 4}) {
    testing::CaseSpace space{testing::small_counts(n), {DType::int32, DType::float32}, {RedOp::sum, RedOp::max}};
    ThreadWorld w(n);
    w.run([&](ThreadTransport& tt) {
      FakeDeviceMemory dev(/*asynchronous=*/true);
      DirectDeviceTransport direct(tt, dev);
      gpu::StreamOrderedTransport t(direct, dev);
      t.scope().set_timeout(std::chrono::seconds(30));
      for (const verify::Case& c : testing::expand(e->op, n, t.rank(), space)) {
        const std::size_t segment = (c.count % 2) ? 64 : 0;  // many pipeline steps through scratch slots
        const verify::Outcome o = verify::run_checked(t, *e, c, segment);
        if (o.check.wrong) {
          std::lock_guard lk(mu);
          failures.push_back(testing::describe(c) + " rank " + std::to_string(t.rank()) + ": " +
                             std::to_string(o.check.wrong) + " wrong");
        }
      }
    });
  }
  for (std::size_t i = 0; i < failures.size() && i < 10; ++i) ADD_FAILURE() << failures[i];
  EXPECT_TRUE(failures.empty()) << failures.size() << " failing (case, rank) pairs";
}

std::vector<const AlgoEntry*> custom_entries() {
  std::vector<const AlgoEntry*> out;
  for (const AlgoEntry& e : Registry::get().all())
    if (e.backend == "any") out.push_back(&e);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Registry, OrderedAlgorithm, ::testing::ValuesIn(custom_entries()),
                         [](const ::testing::TestParamInfo<const AlgoEntry*>& i) {
                           return std::string(op_name(i.param->op)) + "_" + i.param->algo;
                         });

}  // namespace
}  // namespace collbench
