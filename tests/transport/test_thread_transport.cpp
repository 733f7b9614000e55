#include <gtest/gtest.h>

#include <array>
#include <numeric>

#include "collectives/backends/thread/thread_transport.hpp"
#include "transport/split_checks.hpp"

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

// A burst (osu_bw's window): every send of one buffer, every receive into slot i % slots, in order.
TEST(ThreadTransport, BurstsPostEveryMessageIntoItsSlot) {
  ThreadWorld world(2);
  world.run([](ThreadTransport& t) {
    constexpr std::size_t kMessages = 6, kSlots = 4, kBytes = 3, kStride = 8;
    std::array<Request, kMessages> reqs;
    if (t.rank() == 0) {
      for (std::size_t i = 0; i < kMessages; ++i) {
        const std::array<unsigned char, kBytes> msg{static_cast<unsigned char>(i), 7, 9};
        t.send(msg.data(), kBytes, 1, 5);  // distinct payloads, so the slot order shows
      }
      std::array<unsigned char, kBytes> same{1, 2, 3};
      t.isend_burst(same.data(), kBytes, 1, 6, reqs);
      t.wait_all(reqs);
    } else {
      std::array<unsigned char, kStride * kSlots> slots{};
      t.irecv_burst(slots.data(), kBytes, kStride, kSlots, 0, 5, reqs);
      t.wait_all(reqs);
      for (std::size_t s = 0; s < kSlots; ++s)  // slots 0, 1 were written twice: messages 4, 5 last
        EXPECT_EQ(slots[s * kStride], s + (s < kMessages - kSlots ? kSlots : 0)) << "slot " << s;
      EXPECT_EQ(slots[kStride + 1], 7);
      EXPECT_EQ(slots[3], 0) << "nothing past a message's bytes";
      t.irecv_burst(slots.data(), kBytes, kStride, kSlots, 0, 6, reqs);
      t.wait_all(reqs);
      EXPECT_EQ(slots[kStride * 3 + 2], 3);
    }
  });
}

TEST(ThreadTransport, SendCompletesOnlyWhenReceived) {
  // Both ranks block in send before receiving: a rendezvous transport must time out, and
  // the error names the peer.
  ThreadWorld w(2);
  try {
    w.run([](ThreadTransport& t) {
      t.scope().set_timeout(200ms);
      t.scope().set_call({"allreduce", "ring", 4096, 3, "timed"});
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
      t.scope().set_timeout(10s);
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

TEST(ThreadTransportSplit, ContractForWorldSizes1To8) {
  for (int n = 1; n <= 8; ++n) {
    SCOPED_TRACE("world size " + std::to_string(n));
    ThreadWorld w(n);
    w.run([](ThreadTransport& t) {
      t.scope().set_timeout(20s);  // a broken split deadlocks: fail instead of hanging
      testing::check_split_contract(t);
    });
  }
}

TEST(ThreadTransportSplit, SplitsAreCollectiveRoundAfterRound) {
  // Many splits back to back, with parent traffic between them: a fast rank starting the
  // next split must not disturb a slow rank still reading the previous one's result.
  ThreadWorld w(5);
  w.run([](ThreadTransport& t) {
    t.scope().set_timeout(20s);
    for (int round = 0; round < 30; ++round) {
      const int color = (t.rank() + round) % 2;
      Transport* s = t.split("round" + std::to_string(round), color, t.rank());
      ASSERT_NE(s, nullptr);
      int members = 0;
      for (int r = 0; r < t.size(); ++r) members += (r + round) % 2 == color;
      EXPECT_EQ(s->size(), members);
      testing::expect_ring_in(*s, "round " + std::to_string(round));
    }
  });
}

TEST(ThreadTransportSplit, TimeoutInASubTransportNamesSubAndWorldRanks) {
  ThreadWorld w(4);
  try {
    w.run([](ThreadTransport& t) {
      t.scope().set_timeout(200ms);
      t.scope().set_call({"allreduce", "hier", 64, 4, "timed"});
      Transport* pair = t.split("pairs", t.rank() / 2, -t.rank());  // {1, 0} and {3, 2}
      ASSERT_NE(pair, nullptr);
      int x = 0;
      if (t.rank() == 2) pair->recv(&x, sizeof x, 1 - pair->rank(), 9);  // world rank 3 never sends
    });
    FAIL() << "expected a timeout";
  } catch (const TimeoutError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("op=allreduce algo=hier size=64 phase=timed iteration=4"), std::string::npos) << what;
    EXPECT_NE(what.find("rank=1 peer=0 tag=9"), std::string::npos) << what;  // sub ranks
    EXPECT_NE(what.find("split=pairs world_rank=2 world_peer=3"), std::string::npos) << what;
    EXPECT_EQ(e.context().world_peer, 3);
  }
}

TEST(ThreadTransportSplit, FailureOfAnyRankWakesWaitersInSubTransports) {
  ThreadWorld w(4);
  try {
    w.run([](ThreadTransport& t) {
      t.scope().set_timeout(10s);
      Transport* s = t.split("all-but-3", t.rank() == 3 ? Transport::kNoColor : 0, 0);
      if (t.rank() == 3) throw std::runtime_error("planted failure on rank 3");
      int x;
      s->recv(&x, 4, (s->rank() + 1) % s->size(), 0);  // nobody sends: only the failure ends it
    });
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "planted failure on rank 3");
  }
}

}  // namespace
}  // namespace collbench
