// The test-only fault hook: its grammar, the decorator dropping exactly one irecv, and the one
// corrupting received messages.
#include <gtest/gtest.h>

#include <thread>

#include "collectives/backends/thread/thread_transport.hpp"
#include "harness/runtime/fault.hpp"

namespace collbench {
namespace {

TEST(Fault, Grammar) {
  const FaultSpec s = parse_fault_spec("skip_recv:rank=1:after=5");
  EXPECT_EQ(s.kind, FaultSpec::Kind::skip_recv);
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.after, 5);
  const FaultSpec c = parse_fault_spec("corrupt:rank=1:after=0");
  EXPECT_EQ(c.kind, FaultSpec::Kind::corrupt);
  EXPECT_EQ(c.rank, 1);
  EXPECT_EQ(c.after, 0);
  const FaultSpec k = parse_fault_spec("kill:rank=2:after_points=3");
  EXPECT_EQ(k.kind, FaultSpec::Kind::kill);
  EXPECT_EQ(k.after, 3);
  const FaultSpec st = parse_fault_spec("stop:rank=1:after_points=2");
  EXPECT_EQ(st.kind, FaultSpec::Kind::stop);
  EXPECT_EQ(st.rank, 1);
  EXPECT_EQ(st.after, 2);
  const FaultSpec d = parse_fault_spec("delay:algo=ring:min_bytes=65536:percent=20");
  EXPECT_EQ(d.kind, FaultSpec::Kind::delay);
  EXPECT_DOUBLE_EQ(d.fraction, 0.2);
  EXPECT_TRUE(d.delays("ring", 65536));
  EXPECT_FALSE(d.delays("ring", 32768));
  EXPECT_FALSE(d.delays("library", 1 << 20));
  EXPECT_FALSE(k.delays("ring", 1 << 20)) << "only a delay fault delays";
  const FaultSpec sl = parse_fault_spec("slow:rank=2:us=300");
  EXPECT_EQ(sl.kind, FaultSpec::Kind::slow);
  EXPECT_EQ(sl.rank, 2);
  EXPECT_DOUBLE_EQ(sl.slow_us, 300);
  EXPECT_FALSE(sl.delays("ring", 1 << 20)) << "a straggler is not the delay fault";
  for (const char* bad :
       {"", "skip_recv", "delay:algo=ring:min_bytes=64K:percent=20", "delay:algo=ring:percent=20",
        "delay:algo=ring:min_bytes=1:percent=-5", "delay:ring:min_bytes=1:percent=5", "skip_recv:rank=1",
        "skip_recv:rank=1:after_points=2", "corrupt:rank=1", "corrupt:rank=1:after_points=2", "kill:rank=1:after=2", "stop:rank=1:after=2", "hang:rank=1:after=2",
        "skip_recv:rank=-1:after=2", "skip_recv:rank=1:after=x", "skip_recv:rank=1:after=2:extra",
        "slow:rank=1", "slow:rank=1:us=0", "slow:rank=x:us=5", "slow:rank=1:ms=5", "slow:rank=1:us=5:extra"}) {
    try {
      parse_fault_spec(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("COLLBENCH_TEST_FAULT"), std::string::npos);
      EXPECT_NE(std::string(e.what()).find("; accepted: "), std::string::npos);
    }
  }
}

TEST(Fault, DropsExactlyTheNthReceiveOfTheFaultyRank) {
  ThreadWorld world(2);
  const FaultSpec spec = parse_fault_spec("skip_recv:rank=1:after=1");
  int got[2] = {0, 0};
  bool sender_timed_out = false;
  world.run([&](ThreadTransport& inner) {
    FaultyTransport t(inner, spec);  // on every rank, as in the runner; only rank 1 is faulty
    t.scope().set_timeout(std::chrono::milliseconds(300));
    if (t.rank() == 0) {
      int v = 7;
      t.send(&v, sizeof v, 1, 0);  // received
      try {
        t.send(&v, sizeof v, 1, 1);  // rank 1 never posts this receive
      } catch (const TimeoutError& e) {
        sender_timed_out = true;  // (thread transport sends are synchronous)
        EXPECT_EQ(e.context().peer, 1);
      }
    } else {
      t.recv(&got[0], sizeof(int), 0, 0);
      t.recv(&got[1], sizeof(int), 0, 1);  // dropped: returns at once, nothing received
    }
  });
  EXPECT_EQ(got[0], 7);
  EXPECT_EQ(got[1], 0);
  // The thread transport's sends are rendezvous: the dropped receive leaves the sender waiting
  // until its timeout, naming rank 1 (over MPI an eager send completes anyway: the end-to-end
  // test, harness.reliability_hang, uses 1 MiB).
  EXPECT_TRUE(sender_timed_out) << "the send to the dropped receive completed";
}

TEST(Fault, CorruptFlipsABitOfEveryMessageFromTheNthReceiveOn) {
  ThreadWorld world(2);
  const FaultSpec spec = parse_fault_spec("corrupt:rank=1:after=1");
  unsigned char got[4] = {0, 0, 0, 0};
  int wide[2] = {0, 0};
  world.run([&](ThreadTransport& inner) {
    FaultyTransport t(inner, spec);  // on every rank; only rank 1 is faulty
    t.scope().set_timeout(std::chrono::seconds(10));
    if (t.rank() == 0) {
      const unsigned char v[4] = {10, 20, 30, 40};
      for (int k = 0; k < 3; ++k) t.send(&v[k], 1, 1, k);
      int w[2] = {100, 200};
      t.send(w, sizeof w, 1, 3);
      t.recv(&got[3], 1, 1, 4);  // rank 0's receives are intact
    } else {
      t.recv(&got[0], 1, 0, 0);  // irecv #0: before the fault
      Request rs[2] = {t.irecv(&got[1], 1, 0, 1), t.irecv(&got[2], 1, 0, 2)};
      t.wait_all(rs);  // #1 and #2, through wait_all
      t.recv(wide, sizeof wide, 0, 3);  // #3: only its first byte
      const unsigned char x = 40;
      t.send(&x, 1, 0, 4);
    }
  });
  EXPECT_EQ(got[0], 10);
  EXPECT_EQ(got[1], 21);
  EXPECT_EQ(got[2], 31);
  EXPECT_EQ(wide[0], 101);
  EXPECT_EQ(wide[1], 200);
  EXPECT_EQ(got[3], 40);
}

TEST(Fault, AfterTheDropTheFaultyRankWaitsFourTimesLonger) {
  ThreadWorld world(2);
  const FaultSpec spec = parse_fault_spec("skip_recv:rank=1:after=0");
  std::chrono::steady_clock::duration waited{};
  world.run([&](ThreadTransport& inner) {
    FaultyTransport t(inner, spec);
    t.scope().set_timeout(std::chrono::milliseconds(100));  // shared with `inner`
    if (t.rank() != 1) return;
    int x = 0;
    t.recv(&x, sizeof x, 0, 0);  // dropped
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_THROW(t.recv(&x, sizeof x, 0, 1), TimeoutError);  // nobody sends
    waited = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(inner.scope().timeout(), std::chrono::milliseconds(100)) << "the scaled timeout must not stick";
  });
  EXPECT_GE(waited, std::chrono::milliseconds(390));
}

// delay and slow act through the call decorator only; without them nothing wraps the calls.
TEST(Fault, CallDecoratorWrapsOnlyWhatTheSpecNames) {
  ThreadWorld world(1);
  world.run([](ThreadTransport& t) {
    EXPECT_EQ(FaultInjector(std::nullopt, t, 0).around_calls(), nullptr);
    EXPECT_EQ(FaultInjector(parse_fault_spec("kill:rank=0:after_points=1"), t, 0).around_calls(), nullptr);
    EXPECT_EQ(FaultInjector(parse_fault_spec("slow:rank=1:us=10"), t, 0).around_calls(), nullptr) << "rank 1's straggler";
    FaultInjector slow(parse_fault_spec("slow:rank=0:us=2000"), t, 0);
    ASSERT_NE(slow.around_calls(), nullptr);
    EXPECT_TRUE(slow.around_calls()->wraps("any", 8));
    int calls = 0;
    const auto t0 = std::chrono::steady_clock::now();
    slow.around_calls()->around("ring", 8, [&] { ++calls; });
    EXPECT_EQ(calls, 1);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::microseconds(2000)) << "the straggler's sleep";
    FaultInjector delay(parse_fault_spec("delay:algo=ring:min_bytes=1024:percent=50"), t, 0);
    ASSERT_NE(delay.around_calls(), nullptr);
    EXPECT_TRUE(delay.around_calls()->wraps("ring", 1024));
    EXPECT_FALSE(delay.around_calls()->wraps("ring", 1023));
    EXPECT_FALSE(delay.around_calls()->wraps("tree", 1 << 20));
    const auto d0 = std::chrono::steady_clock::now();
    delay.around_calls()->around("ring", 1024, [&] { std::this_thread::sleep_for(std::chrono::milliseconds(4)); });
    EXPECT_GE(std::chrono::steady_clock::now() - d0, std::chrono::milliseconds(6)) << "4 ms call + 50 % spun";
  });
}

}  // namespace
}  // namespace collbench
