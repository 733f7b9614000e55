// ForwardingTransport with nothing overridden behaves exactly like its inner transport, and
// shares its call scope; a wrapper overriding one call changes only that call.
#include <gtest/gtest.h>

#include <array>

#include "collectives/transport/forwarding_transport.hpp"
#include "collectives/backends/thread/thread_transport.hpp"
#include "transport/split_checks.hpp"

namespace collbench {
namespace {

using namespace std::chrono_literals;

TEST(ForwardingTransport, WithNothingOverriddenBehavesLikeItsInner) {
  ThreadWorld w(3);
  w.run([](ThreadTransport& inner) {
    ForwardingTransport t(inner);
    EXPECT_EQ(t.rank(), inner.rank());
    EXPECT_EQ(t.size(), inner.size());
    EXPECT_EQ(t.backend(), "thread");
    EXPECT_EQ(&t.memory(), &inner.memory());
    EXPECT_EQ(&t.scope(), &inner.scope());
    EXPECT_EQ(&t.inner(), &inner);
    const int right = (t.rank() + 1) % 3, left = (t.rank() + 2) % 3;
    int out = 10 * t.rank(), in = -1;
    std::array<Request, 2> rs{t.irecv(&in, sizeof in, left, 3), t.isend(&out, sizeof out, right, 3)};
    t.wait_all(rs);
    EXPECT_EQ(in, 10 * left);
    // Messages through the wrapper and the inner are one stream (same tag, FIFO).
    if (t.rank() == 0) {
      int a = 1, b = 2;
      t.send(&a, sizeof a, 1, 4);
      inner.send(&b, sizeof b, 1, 4);
    } else if (t.rank() == 1) {
      int a = 0, b = 0;
      inner.recv(&a, sizeof a, 0, 4);
      t.recv(&b, sizeof b, 0, 4);
      EXPECT_EQ(a, 1);
      EXPECT_EQ(b, 2);
    }
    t.barrier();
  });
}

TEST(ForwardingTransport, ErrorsOfTheInnerNameTheCallSetThroughTheWrapper) {
  ThreadWorld w(2);
  try {
    w.run([](ThreadTransport& inner) {
      ForwardingTransport t(inner);
      t.scope().set_timeout(200ms);  // set once, on the shared scope
      t.scope().set_call({"broadcast", "tree", 512, 5, "timed"});
      int x = 0;
      if (t.rank() == 0) t.recv(&x, sizeof x, 1, 2);  // rank 1 never sends
    });
    FAIL() << "expected a timeout";
  } catch (const TimeoutError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("op=broadcast algo=tree size=512 phase=timed iteration=5 rank=0 peer=1 tag=2"),
              std::string::npos)
        << what;
  }
}

// A wrapper that changes one call (counts sends) and wraps its sub-transports the same way.
class CountingSends final : public ForwardingTransport {
 public:
  CountingSends(Transport& inner, int& sends) : ForwardingTransport(inner), sends_(sends) {}
  Request isend(const void* buf, std::size_t bytes, int peer, int tag) override {
    ++sends_;
    return inner().isend(buf, bytes, peer, tag);
  }

 protected:
  std::unique_ptr<Transport> wrap(Transport& inner_sub) override {
    return std::make_unique<CountingSends>(inner_sub, sends_);
  }

 private:
  int& sends_;
};

TEST(ForwardingTransport, SplitsWrapTheInnersSubTransports) {
  for (int n : {1, 4, 7}) {
    ThreadWorld w(n);
    w.run([](ThreadTransport& inner) {
      inner.scope().set_timeout(20s);
      int sends = 0;
      CountingSends t(inner, sends);
      testing::check_split_contract(t);
      Transport* sub = t.split("mod3", t.rank() % 3, t.rank());
      EXPECT_EQ(sub, t.split("mod3", t.rank() % 3, t.rank()));
      EXPECT_EQ(inner.split("mod3", t.rank() % 3, t.rank())->world_rank(0), sub->world_rank(0))
          << "the wrapper's split wraps the inner's cached one";
      if (t.size() > 1) {
        EXPECT_GT(sends, 0) << "sends in sub-transports go through the wrapper";
      }
    });
  }
}

}  // namespace
}  // namespace collbench
