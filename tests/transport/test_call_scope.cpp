// The call scope and the one deadline helper every transport waits with.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "collectives/transport/call_scope.hpp"
#include "collectives/backends/thread/thread_transport.hpp"

namespace collbench {
namespace {

using namespace std::chrono_literals;

TEST(CallScope, SetCallCopiesWhatIsMeasuredAndTheIterationIsOneStore) {
  CallScope s;
  EXPECT_EQ(s.timeout(), CallScope::kDefaultTimeout);
  s.set_call({"allreduce", "ring", 4096, -1, "timed"});
  const char* algo = s.call().algo.data();
  s.set_iteration(7);
  s.set_call({"allreduce", "ring", 4096, 8, "timed"});  // same strings: kept, not reassigned
  EXPECT_EQ(s.call().algo.data(), algo);
  EXPECT_EQ(s.call().iteration, 8);
  s.set_phase("verify");
  EXPECT_EQ(s.call().phase, "verify");
  ErrorContext c;
  c.call = s.call();
  c.rank = 1;
  c.peer = 2;
  EXPECT_EQ(c.describe(), "op=allreduce algo=ring size=4096 phase=verify iteration=8 rank=1 peer=2");
}

TEST(Deadline, PollTimesOutAfterTheScopesTimeout) {
  CallScope s(50ms);
  const auto t0 = CallScope::Clock::now();
  Deadline d(s);
  long polls = 0;
  EXPECT_FALSE(d.poll([&] { return ++polls < 0; }));  // never done
  const auto waited = CallScope::Clock::now() - t0;
  EXPECT_GE(waited, 50ms);
  EXPECT_LT(waited, 5s);
  EXPECT_EQ(d.timeout(), 50ms);
  EXPECT_GE(polls, static_cast<long>(Deadline::kClockEvery));
}

TEST(Deadline, ReadsTheClockOnlyEveryNPolls) {
  CallScope s(0ms);  // already expired at the first clock read
  Deadline d(s, 4);
  std::this_thread::sleep_for(1ms);
  EXPECT_FALSE(d.expired());
  EXPECT_FALSE(d.expired());
  EXPECT_FALSE(d.expired());
  EXPECT_TRUE(d.expired());  // the 4th poll reads the clock
  Deadline every(s, Deadline::kEveryPoll);
  std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(every.expired());
}

TEST(Deadline, DoneBeforeTheDeadlineReturnsTrue) {
  CallScope s(10s);
  Deadline d(s);
  int polls = 0;
  EXPECT_TRUE(d.poll([&] { return ++polls == 3; }));
  EXPECT_EQ(polls, 3);
}

TEST(Deadline, PublishesBlockingCallsOnTheScopeNested) {
  CallScope s(10s);
  EXPECT_FALSE(s.blocking());
  EXPECT_FALSE(s.deadline().has_value());
  {
    Deadline outer(s);
    EXPECT_TRUE(s.blocking());
    EXPECT_EQ(s.deadline(), outer.at());
    EXPECT_EQ(s.blocking_calls(), 1u);
    {
      s.set_timeout(1s);
      Deadline inner(s);
      EXPECT_EQ(s.deadline(), inner.at());
      EXPECT_LT(inner.at(), outer.at());
      EXPECT_EQ(s.blocking_calls(), 2u);
    }
    EXPECT_TRUE(s.blocking());
    EXPECT_EQ(s.deadline(), outer.at());  // the enclosing call's deadline again
  }
  EXPECT_FALSE(s.blocking());
  EXPECT_EQ(s.blocking_calls(), 2u);
}

// What a watchdog will do: from another thread, see that a rank is blocked, since when it
// has made no progress, and its deadline.
TEST(Deadline, AnotherThreadSeesARankBlockedInAWait) {
  ThreadWorld w(2);
  std::atomic<bool> seen{false};
  std::atomic<CallScope*> scope0{nullptr};
  w.run([&](ThreadTransport& t) {
    t.scope().set_timeout(20s);
    int x = 0;
    if (t.rank() == 0) {
      scope0 = &t.scope();
      t.recv(&x, sizeof x, 1, 0);  // blocks until rank 1 has seen it blocked
    } else {
      while (!scope0.load()) std::this_thread::yield();
      CallScope& s = *scope0.load();
      const auto until = CallScope::Clock::now() + 10s;
      while (!s.blocking() && CallScope::Clock::now() < until) std::this_thread::yield();
      seen = s.blocking() && s.deadline().has_value() && *s.deadline() > CallScope::Clock::now();
      t.send(&x, sizeof x, 0, 0);
    }
  });
  EXPECT_TRUE(seen.load());
}

}  // namespace
}  // namespace collbench
