// The watchdog (harness/runtime/watchdog.hpp): it ends a process whose blocking call outlives its
// timeout with the same one line a thrown TimeoutError gives, leaves finished and self-timed
// calls alone, and its wording names the peer, the message and the measured call.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "collectives/backends/thread/thread_transport.hpp"
#include "harness/runtime/control_call.hpp"
#include "harness/runtime/last_words.hpp"
#include "harness/runtime/watchdog.hpp"

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
  // Calls back to back, each far shorter than the timeout, for longer than the timeout in all,
  // then idle time: none may fire (a fire ends this process with status 3). The bound is the
  // feature: a 500 ms timeout against 1 ms calls, so only a call preempted for ~half a second
  // (not a loaded machine's few ms) could fire it; the watchdog must have looked at least
  // 2 x the timeout / its tick times meanwhile.
  constexpr auto kTimeout = 500ms;
  auto s = std::make_shared<CallScope>(kTimeout);
  Watchdog w(s, 0);
  const auto until = std::chrono::steady_clock::now() + 2 * kTimeout;
  long calls = 0;
  while (std::chrono::steady_clock::now() < until) {
    BlockingCall c(*s, nullptr, "in a short call");
    std::this_thread::sleep_for(1ms);
    ++calls;
  }
  EXPECT_GT(calls, 2) << "the calls must span more than the timeout";
  std::this_thread::sleep_for(kTimeout + 2 * Watchdog::tick_for(kTimeout));  // idle, no call running
  EXPECT_FALSE(s->blocking());
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
  // The last words say which phase it fired in: a watchdog that fired at the call's own 100 ms
  // (in phase 1) would exit 3 with the same line, so the phase is what the test checks. Phase 1
  // lasts 300 ms: past the call's own timeout, 900 ms before the 1200 ms backstop.
  EXPECT_EXIT(
      {
        auto s = std::make_shared<CallScope>(100ms);
        static std::atomic<int> phase{1};
        LastWords words;
        words.set([](int) { std::fprintf(stderr, "fired in phase %d\n", phase.load()); });
        Watchdog w(s, 0, &words);
        {
          Deadline d(*s);
          std::this_thread::sleep_for(300ms);  // past its own timeout, before the backstop
        }
        phase = 2;
        Deadline d(*s);
        std::this_thread::sleep_for(10s);
        std::exit(0);
      },
      ::testing::ExitedWithCode(3), "timed out after 100 ms(.|\n)*fired in phase 2");
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
  // As above, the phase it fired in is checked (the line names the control call's limit
  // whenever it fires). Phase 1: 300 ms, past the data path's 100 ms, 900 ms inside the limit.
  EXPECT_EXIT(
      {
        auto s = std::make_shared<CallScope>(100ms);
        static std::atomic<int> phase{1};
        LastWords words;
        words.set([](int) { std::fprintf(stderr, "fired in phase %d\n", phase.load()); });
        Watchdog w(s, 0, &words);
        {
          const ControlCall c(s.get(), 0, "in the harness's MPI_Allreduce (control)");
          std::this_thread::sleep_for(300ms);
        }
        phase = 2;
        const ControlCall c(s.get(), 0, "in the harness's MPI_Allreduce (control)");
        std::this_thread::sleep_for(10s);
        std::exit(0);
      },
      ::testing::ExitedWithCode(3),
      "timed out after 1200 ms in the harness's MPI_Allreduce \\(control\\)(.|\n)*fired in phase 2");
}

}  // namespace
}  // namespace collbench
