// The watchdog (harness/run/watchdog.hpp): it ends a process whose blocking call outlives its
// timeout with the same one line a thrown TimeoutError gives, leaves finished and self-timed
// calls alone, and its wording names the peer, the message and the measured call.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "collectives/transport/thread/thread_transport.hpp"
#include "harness/run/control_call.hpp"
#include "harness/run/last_words.hpp"
#include "harness/run/watchdog.hpp"

namespace collbench {
namespace {

using namespace std::chrono_literals;

TEST(Watchdog, MessageIsTheTimeoutErrorLine) {
  CallScope s(2000ms);
  s.set_call({"broadcast", "naive", 1048576, 1, "timed"});
  {
    BlockingCall c(s, nullptr, "");
    c.message(1, 1, 1048576, true);
    EXPECT_EQ(stuck_call_message(s, s.waiting()),
              "timed out after 2000 ms waiting for peer to receive from rank 1 (op=broadcast algo=naive size=1048576 "
              "phase=timed iteration=1 peer=1 tag=1 bytes=1048576)");
  }
  {
    BlockingCall c(s, nullptr, "in MPI_Allreduce (some rank never arrived)");
    EXPECT_EQ(stuck_call_message(s, s.waiting()),
              "timed out after 2000 ms in MPI_Allreduce (some rank never arrived) (op=broadcast algo=naive "
              "size=1048576 phase=timed iteration=1)");
  }
}

TEST(Watchdog, NamesTheRankOfTheWaitingTransport) {
  ThreadWorld w(2);
  w.run([&](ThreadTransport& t) {
    if (t.rank() != 1) return;
    BlockingCall c(t.scope(), &t, "");
    c.message(0, 7, 8, false);
    const std::string m = stuck_call_message(t.scope(), t.scope().waiting());
    EXPECT_NE(m.find("waiting for message from peer 0"), std::string::npos) << m;
    EXPECT_NE(m.find("rank=1 peer=0 tag=7 bytes=8"), std::string::npos) << m;
  });
}

TEST(Watchdog, TickAndLimits) {
  EXPECT_EQ(Watchdog::tick_for(60s), 100ms);
  EXPECT_EQ(Watchdog::tick_for(2000ms), 100ms);
  EXPECT_EQ(Watchdog::tick_for(400ms), 50ms);
  EXPECT_EQ(Watchdog::tick_for(1ms), 1ms);
  EXPECT_EQ(Watchdog::limit_for(2000ms, false), 2000ms);
  EXPECT_EQ(Watchdog::limit_for(2000ms, true), 5000ms);  // a backstop behind the caller's own throw
}

TEST(Watchdog, WatchesItsScopeWhileAlive) {
  auto s = std::make_shared<CallScope>(1000ms);
  {
    Watchdog w(s, 0);
    EXPECT_TRUE(s->watched());
  }
  EXPECT_FALSE(s->watched());
}

TEST(Watchdog, ShortCallsAndIdleTimeDoNotFire) {
  auto s = std::make_shared<CallScope>(50ms);
  Watchdog w(s, 0);
  const auto until = std::chrono::steady_clock::now() + 300ms;
  while (std::chrono::steady_clock::now() < until) {
    BlockingCall c(*s, nullptr, "in a short call");
    std::this_thread::sleep_for(5ms);  // each call well under the timeout, 6 x the timeout in all
  }
  std::this_thread::sleep_for(200ms);  // idle (no call running) for 4 x the timeout
  SUCCEED();
}

TEST(WatchdogDeathTest, AStuckCallEndsTheProcessWithStatus3AndOneLine) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto s = std::make_shared<CallScope>(200ms);
        s->set_call({"allreduce", "library", 8, 4, "timed"});
        Watchdog w(s, 5);
        BlockingCall c(*s, nullptr, "in MPI_Allreduce (some rank never arrived)");
        std::this_thread::sleep_for(10s);  // stuck
        std::exit(0);
      },
      ::testing::ExitedWithCode(3),
      "collbench: error: rank 5: timed out after 200 ms in MPI_Allreduce \\(some rank never arrived\\) "
      "\\(op=allreduce algo=library size=8 phase=timed iteration=4\\)");
}

TEST(WatchdogDeathTest, ASelfTimedCallGetsTheBackstopOnly) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // A Deadline that is never polled (its owner would have thrown at 100 ms) is ended by the
  // watchdog only after 2 x timeout + 1 s.
  EXPECT_EXIT(
      {
        auto s = std::make_shared<CallScope>(100ms);
        Watchdog w(s, 0);
        const auto t0 = std::chrono::steady_clock::now();
        {
          Deadline d(*s);
          std::this_thread::sleep_for(600ms);  // past its own timeout, before the backstop
        }
        const auto first = std::chrono::steady_clock::now() - t0;
        if (first < 600ms) std::exit(1);
        Deadline d(*s);
        std::this_thread::sleep_for(10s);
        std::exit(0);
      },
      ::testing::ExitedWithCode(3), "timed out after 100 ms");
}

// Rank 0's last words (the end record) are said after the line, before _exit(3).
TEST(WatchdogDeathTest, LastWordsAreSaidBeforeTheExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto s = std::make_shared<CallScope>(100ms);
        LastWords words;
        words.set([](int status) { std::fprintf(stderr, "last words: exit_status %d\n", status); });
        Watchdog w(s, 0, &words);
        BlockingCall c(*s, nullptr, "in barrier");
        std::this_thread::sleep_for(10s);
        std::exit(0);
      },
      ::testing::ExitedWithCode(3), "timed out after 100 ms in barrier.*\n.*last words: exit_status 3");
}

TEST(LastWords, SaidOnceAndNotAfterClear) {
  LastWords words;
  int said = 0;
  words.set([&](int) { ++said; });
  words.say(3);
  words.say(3);
  EXPECT_EQ(said, 1);
  words.set([&](int) { ++said; });
  words.clear();
  words.say(143);
  EXPECT_EQ(said, 1);
  words.set([](int) { throw std::runtime_error("disk full"); });
  words.say(3);  // swallowed: the process is about to exit anyway
}

// The harness's control collectives are bounded too, with a longer limit than the data path,
// rank 0 first: a rank stuck in the data path reports first, and rank 0 before the others.
TEST(ControlCall, PublishedWithALongerLimit) {
  EXPECT_EQ(ControlCall::timeout_for(2000ms, 0), 5000ms);
  EXPECT_EQ(ControlCall::timeout_for(2000ms, 3), 6000ms);
  CallScope s(2000ms);
  {
    const ControlCall c(&s, 1, "in the harness's MPI_Allreduce", 4);
    EXPECT_TRUE(s.blocking());
    EXPECT_EQ(s.waiting().timeout, 6000ms);
    EXPECT_EQ(s.waiting().peer, 4);
    EXPECT_FALSE(s.waiting().self_timed);
  }
  EXPECT_FALSE(s.blocking());
  const ControlCall none(nullptr, 0, "no scope: nothing published");
}

TEST(WatchdogDeathTest, AStuckControlCallEndsTheProcessAfterItsOwnLimit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto s = std::make_shared<CallScope>(100ms);
        Watchdog w(s, 0);
        const auto t0 = std::chrono::steady_clock::now();
        {
          const ControlCall c(s.get(), 0, "in the harness's MPI_Allreduce (control)");
          std::this_thread::sleep_for(600ms);  // past the data path's 100 ms, inside 2 x 100 + 1000
        }
        if (std::chrono::steady_clock::now() - t0 < 600ms) std::exit(1);
        const ControlCall c(s.get(), 0, "in the harness's MPI_Allreduce (control)");
        std::this_thread::sleep_for(10s);
        std::exit(0);
      },
      ::testing::ExitedWithCode(3), "timed out after 1200 ms in the harness's MPI_Allreduce \\(control\\)");
}

}  // namespace
}  // namespace collbench
