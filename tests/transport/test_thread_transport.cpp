#include <gtest/gtest.h>

#include <array>
#include <numeric>

#include "collectives/transport/thread/thread_transport.hpp"

namespace collbench {
namespace {

using namespace std::chrono_literals;

TEST(ThreadTransport, MessagesMatchBySourceAndTagInOrder) {
  ThreadWorld w(2);
  w.run([](ThreadTransport& t) {
    if (t.rank() == 0) {
      int a = 1, b = 2, c = 3;
      std::array<Request, 3> rs{t.isend(&a, 4, 1, 7), t.isend(&b, 4, 1, 7), t.isend(&c, 4, 1, 9)};
      t.wait_all(rs);
    } else {
      int x = 0, y = 0, z = 0;
      Request rz = t.irecv(&z, 4, 0, 9);  // posted first, but only tag 9 matches
      Request rx = t.irecv(&x, 4, 0, 7);
      Request ry = t.irecv(&y, 4, 0, 7);
      t.wait(rx);
      t.wait(ry);
      t.wait(rz);
      EXPECT_EQ(x, 1);
      EXPECT_EQ(y, 2);
      EXPECT_EQ(z, 3);
    }
  });
}

TEST(ThreadTransport, SendCompletesOnlyWhenReceived) {
  // Both ranks block in send before receiving: a rendezvous transport must time out, and
  // the error names the peer.
  ThreadWorld w(2);
  try {
    w.run([](ThreadTransport& t) {
      t.set_timeout(200ms);
      t.set_context({"allreduce", "ring", 4096, 3, "timed"});
      std::vector<char> buf(4096);
      t.send(buf.data(), buf.size(), 1 - t.rank(), 0);
      t.recv(buf.data(), buf.size(), 1 - t.rank(), 0);
    });
    FAIL() << "expected a timeout";
  } catch (const TimeoutError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("peer="), std::string::npos) << what;
    EXPECT_NE(what.find("op=allreduce algo=ring size=4096"), std::string::npos) << what;
    EXPECT_NE(what.find("iteration=3"), std::string::npos) << what;
  }
}

TEST(ThreadTransport, TruncationIsAnError) {
  ThreadWorld w(2);
  EXPECT_THROW(w.run([](ThreadTransport& t) {
                 std::array<char, 8> big{};
                 std::array<char, 4> small{};
                 if (t.rank() == 0) t.send(big.data(), 8, 1, 0);
                 else t.recv(small.data(), 4, 0, 0);
               }),
               TransportError);
}

TEST(ThreadTransport, InvalidPeerAndTagAreRejected) {
  ThreadWorld w(2);
  EXPECT_THROW(w.run([](ThreadTransport& t) {
                 int x;
                 t.irecv(&x, 4, t.rank(), 0);  // self
               }),
               Error);
  EXPECT_THROW(w.run([](ThreadTransport& t) {
                 int x;
                 t.irecv(&x, 4, 1 - t.rank(), Transport::kMaxTag + 1);
               }),
               Error);
}

TEST(ThreadTransport, FailureOfOneRankWakesTheOthersAndIsRethrown) {
  ThreadWorld w(3);
  try {
    w.run([](ThreadTransport& t) {
      t.set_timeout(10s);
      if (t.rank() == 2) throw std::runtime_error("planted failure on rank 2");
      int x;
      t.recv(&x, 4, 2, 0);  // would wait 10 s without failure propagation
    });
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "planted failure on rank 2");
  }
}

TEST(ThreadTransport, BarrierSynchronisesRepeatedly) {
  ThreadWorld w(5);
  std::atomic<int> arrived{0};
  w.run([&](ThreadTransport& t) {
    for (int round = 1; round <= 20; ++round) {
      arrived++;
      t.barrier();
      EXPECT_GE(arrived.load(), 5 * round);
      t.barrier();
    }
  });
}

}  // namespace
}  // namespace collbench
