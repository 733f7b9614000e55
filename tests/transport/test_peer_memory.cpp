// Peer memory on the thread transport: the symmetric heap, flags, a stalled peer's timeout,
// claiming and the kernel's single copy (schedules/peer.hpp), and every zero-copy algorithm on
// registered buffers and, at sizes where readers claim what they read or read by the kernel,
// staged (the registry suites run the staged path's other sizes with the other algorithms).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "collectives/registry.hpp"
#include "collectives/schedules/peer.hpp"
#include "collectives/transport/peer_memory.hpp"
#include "collectives/backends/thread/thread_transport.hpp"
#include "common/cases.hpp"
#include "collectives/core/error.hpp"

namespace collbench {
namespace {

using namespace std::chrono_literals;

TEST(PeerMemory, SymmetricBlocksAreReadableByEveryPeer) {
  for (int n : {1, 2, 3, 5}) {
    ThreadWorld w(n);
    w.run([&](ThreadTransport& t) {
      PeerMemory* pm = t.peer_memory();
      ASSERT_NE(pm, nullptr);
      auto* a = static_cast<int*>(pm->allocate(100));
      auto* b = static_cast<int*>(pm->allocate(8));
      EXPECT_TRUE(pm->owns(a, 100));
      EXPECT_TRUE(pm->owns(a + 10, 4));
      EXPECT_FALSE(pm->owns(a, 1 << 20));
      int local = 0;
      EXPECT_FALSE(pm->owns(&local, 4));
      EXPECT_EQ(pm->peer(a, t.rank()), a);
      a[3] = 100 + t.rank();
      b[1] = 200 + t.rank();
      t.barrier();
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(pm->peer(a, r)[3], 100 + r);
        EXPECT_EQ(pm->peer(b + 1, r)[0], 200 + r);
      }
      t.barrier();
      pm->deallocate(a);
      EXPECT_FALSE(pm->owns(b - 100, 4));
      EXPECT_EQ(pm->peer(b, 0)[1], 200);
      EXPECT_THROW(pm->peer(&local, 0), Error);
    });
  }
}

TEST(PeerMemory, ScratchGrowsAndKeepsItsName) {
  ThreadWorld w(3);
  w.run([](ThreadTransport& t) {
    PeerMemory& pm = *t.peer_memory();
    void* s1 = pm.scratch("x", 10);
    EXPECT_EQ(pm.scratch("x", 4096), s1) << "at least 4 KiB from the start: no regrowth";
    void* s2 = pm.scratch("x", 1 << 20);
    EXPECT_TRUE(pm.owns(s2, 1 << 20));
    EXPECT_NE(pm.scratch("y", 16), s2);
  });
}

// Flags order each call's steps: a value written before a raise is seen after the wait,
// across many back-to-back calls (sequence bases never confuse one call with the next).
TEST(PeerMemory, FlagsOrderStepsAcrossBackToBackCalls) {
  ThreadWorld w(4);
  w.run([](ThreadTransport& t) {
    PeerMemory& pm = *t.peer_memory();
    auto* v = static_cast<long*>(pm.allocate(sizeof(long)));
    for (long call = 0; call < 2000; ++call) {
      const std::uint64_t base = pm.begin_call();
      *v = call * 10 + t.rank();
      pm.raise(base + 1);
      for (int r = 0; r < t.size(); ++r) {
        if (r == t.rank()) continue;
        pm.wait(r, base + 1);
        ASSERT_EQ(*pm.peer(v, r), call * 10 + r) << "call " << call;
      }
      pm.end_call(base, /*settle=*/call % 2 == 0);  // both ways of ending
    }
  });
}

// Inline slots and 16-byte words alternate by call and nothing waits for a done flag: a
// fast rank may post call c + 1 while a slow one still reads call c. Every value read must
// be the one posted for that call, across back-to-back calls mixing both kinds and a
// flag-ended call (whose next begin_call waits) in between.
TEST(PeerMemory, InlineSlotsAndWordsCarryEachCallsValue) {
  for (int n : {2, 3, 5}) {
    ThreadWorld w(n);
    w.run([](ThreadTransport& t) {
      PeerMemory& pm = *t.peer_memory();
      for (long call = 0; call < 3000; ++call) {
        const std::uint64_t base = pm.begin_call();
        const long mine = call * 100 + t.rank();
        if (call % 3 == 0 && pm.has_words()) {
          pm.post_word(base + 1, &mine, sizeof mine);
          for (int r = 0; r < t.size(); ++r) {
            if (r == t.rank()) continue;
            long got = -1;
            pm.wait_word(r, base + 1, &got);
            ASSERT_EQ(got, call * 100 + r) << "word, call " << call;
          }
          pm.end_alternating_call(base);
        } else {
          std::memcpy(pm.inline_slot(t.rank(), base), &mine, sizeof mine);
          pm.raise(base + 1);
          for (int r = 0; r < t.size(); ++r) {
            if (r == t.rank()) continue;
            pm.wait(r, base + 1);
            long got = -1;
            std::memcpy(&got, pm.inline_slot(r, base), sizeof got);
            ASSERT_EQ(got, call * 100 + r) << "inline slot, call " << call;
          }
          if (call % 7 == 0)
            pm.end_call(base, false);
          else
            pm.end_alternating_call(base);
        }
      }
    });
  }
}

// Messages of several words (schedules::peer::exchange_words): every size from an empty word to
// PeerMemory::kMaxWordBytes, back to back, each call's bytes as posted (a shorter message after
// a longer one in the same alternate leaves no stale word read), and with `from` only that rank's
// bytes, the others' empty words still waited for.
TEST(PeerMemory, WordMessagesCarryEveryByteOfEachCall) {
  for (int n : {2, 3}) {
    ThreadWorld w(n);
    w.run([](ThreadTransport& t) {
      PeerMemory& pm = *t.peer_memory();
      if (!pm.has_words()) GTEST_SKIP() << "no 16-byte atomics on this CPU (x86 with AVX)";
      auto byte = [](long call, int r, std::size_t i) { return static_cast<std::uint8_t>(call * 7 + r * 31 + i); };
      for (long call = 0; call < 600; ++call) {
        const std::size_t bytes = static_cast<std::size_t>(call * 37) % (PeerMemory::kMaxWordBytes + 1);
        const int from = call % 3 == 0 ? static_cast<int>(call % t.size()) : -1;
        ASSERT_TRUE(schedules::peer::words_fit(pm, bytes));
        std::array<std::uint8_t, PeerMemory::kMaxWordBytes> mine{};
        for (std::size_t i = 0; i < bytes; ++i) mine[i] = byte(call, t.rank(), i);
        const bool posts = from < 0 || from == t.rank();
        schedules::peer::PerRank<schedules::peer::Words> words(t.size());
        const std::uint64_t base =
            schedules::peer::exchange_words(pm, posts ? mine.data() : nullptr, bytes, words, from);
        for (int r = 0; r < t.size(); ++r) {
          if (from >= 0 && r != from) continue;
          const auto* got = reinterpret_cast<const std::uint8_t*>(words[static_cast<std::size_t>(r)].data());
          for (std::size_t i = 0; i < bytes; ++i)
            ASSERT_EQ(got[i], byte(call, r, i))
                << "call " << call << " from rank " << r << " byte " << i << " of " << bytes;
        }
        pm.end_alternating_call(base);
      }
      EXPECT_FALSE(schedules::peer::words_fit(pm, PeerMemory::kMaxWordBytes + 1));
    });
  }
}

TEST(PeerMemory, AStalledPeerEndsAWordWaitNamingIt) {
  ThreadWorld w(2);
  w.run([&](ThreadTransport& t) {
    PeerMemory& pm = *t.peer_memory();
    if (!pm.has_words()) GTEST_SKIP() << "no 16-byte atomics on this CPU (x86 with AVX)";
    t.scope().set_timeout(300ms);
    const std::uint64_t base = pm.begin_call();
    if (t.rank() == 0) {
      long got = 0;
      try {
        pm.wait_word(1, base + 1, &got);  // rank 1 never posts
        ADD_FAILURE() << "the wait returned although rank 1 never posted its word";
      } catch (const TimeoutError& e) {
        EXPECT_NE(std::string(e.what()).find("peer 1 to raise its flag"), std::string::npos) << e.what();
      }
    }
    t.scope().set_timeout(10s);
    t.barrier();
  });
}

TEST(PeerMemory, AStalledPeerEndsTheWaitNamingIt) {
  ThreadWorld w(3);
  std::atomic<int> timeouts{0};
  w.run([&](ThreadTransport& t) {
    t.scope().set_timeout(300ms);
    PeerMemory& pm = *t.peer_memory();
    const std::uint64_t base = pm.begin_call();
    if (t.rank() != 2) pm.raise(base + 1);  // rank 2 stalls: never raises its flag
    if (t.rank() == 0) {
      const auto t0 = std::chrono::steady_clock::now();
      try {
        pm.wait_all(base + 1);
        ADD_FAILURE() << "the wait returned although rank 2 never raised its flag";
      } catch (const TimeoutError& e) {
        ++timeouts;
        const std::string what = e.what();
        EXPECT_NE(what.find("peer 2 to raise its flag"), std::string::npos) << what;
        EXPECT_NE(what.find("peer=2"), std::string::npos) << what;
        EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
      }
    }
    t.scope().set_timeout(10s);  // the others wait here while rank 0 times out
    t.barrier();
  });
  EXPECT_EQ(timeouts.load(), 1);
}

TEST(Claim, LeavesEveryByteAsItWas) {
  alignas(64) std::array<unsigned char, 640> b{};
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>(i * 7 + 1);
  const auto before = b;
  for (std::size_t off : {0, 1, 63, 64, 65}) schedules::peer::claim(b.data() + off, b.size() - off - (off % 3));
  schedules::peer::claim(b.data() + 3, 10);  // no whole line: nothing
  EXPECT_EQ(b, before);
}

// What the probe decides (schedules::peer::measure_claims): claims are off where they do not
// pay, whatever the traffic.
TEST(Claim, NeverWhereTheProbeFoundThatTheyDoNotPay) {
  ThreadWorld w(2);
  w.run([&](ThreadTransport& t) {
    PeerMemory& pm = *t.peer_memory();
    pm.set_claim_probe({.measured = true, .pays = false});
    EXPECT_EQ(schedules::peer::claim_max_traffic(pm), 0);
    EXPECT_FALSE(schedules::peer::claims(pm, 0));
  });
}

// The probe runs once, collectively, on a peer memory's first zero-copy call, and every rank
// gets rank 0's verdict; not measured with more ranks than cores (claims on, by the LLC rule).
TEST(Claim, ProbeMeasuredOnceTheSameOnEveryRank) {
  constexpr int n = 2;
  std::array<PeerMemory::ClaimProbe, n> seen{};
  ThreadWorld w(n);
  w.run([&](ThreadTransport& t) {
    PeerMemory& pm = schedules::peer::memory_for(t, "test/probe");
    ASSERT_TRUE(pm.claim_probe().has_value());
    const PeerMemory::ClaimProbe p = *pm.claim_probe();
    seen[static_cast<std::size_t>(t.rank())] = p;
    EXPECT_EQ(p.bytes, schedules::peer::stage_bytes(pm));
    if (pm.oversubscribed()) {
      EXPECT_FALSE(p.measured);
      EXPECT_TRUE(p.pays);
    } else {
      EXPECT_TRUE(p.measured);
      EXPECT_GT(p.shared_ns, 0);
      EXPECT_GT(p.claimed_ns, 0);
      EXPECT_EQ(p.pays, p.claimed_ns < p.shared_ns);
    }
    EXPECT_EQ(schedules::peer::claim_max_traffic(pm) > 0, p.pays && pm.llc_bytes() > 0);
    schedules::peer::memory_for(t, "test/probe");  // not measured again: the same values
    EXPECT_EQ(pm.claim_probe()->shared_ns, p.shared_ns);
    EXPECT_EQ(pm.claim_probe()->claimed_ns, p.claimed_ns);
  });
  EXPECT_EQ(seen[0].pays, seen[1].pays);
  EXPECT_EQ(seen[0].shared_ns, seen[1].shared_ns);
  EXPECT_EQ(seen[0].claimed_ns, seen[1].claimed_ns);
}

// Where claims pay (set: the probe's answer differs between machines), by the traffic.
TEST(Claim, ByTrafficWithinTheLastLevelCache) {
  ThreadWorld w(2);
  w.run([&](ThreadTransport& t) {
    PeerMemory& pm = *t.peer_memory();
    pm.set_claim_probe({.pays = true});
    const double max = schedules::peer::claim_max_traffic(pm);
    EXPECT_EQ(max, schedules::peer::kClaimLlcMultiple * static_cast<double>(pm.llc_bytes()));
    EXPECT_FALSE(schedules::peer::claims(pm, max + 1));
    if (pm.llc_bytes() == 0) {  // hwloc found no L2 or L3: claims are off, even for an empty call
      EXPECT_FALSE(schedules::peer::claims(pm, 0));
      return;
    }
    EXPECT_GE(pm.llc_bytes(), pm.l2_bytes());
    EXPECT_TRUE(schedules::peer::claims(pm, max));
  });
}

// A staged call claims by the traffic of one round (the stage the next round rewrites), however
// large the call; a registered allreduce by its whole traffic.
TEST(Claim, StagedCallsWeighOneRound) {
  ThreadWorld w(2);
  w.run([&](ThreadTransport& t) {
    PeerMemory& pm = *t.peer_memory();
    pm.set_claim_probe({.pays = true});  // where claims pay
    CollArgs huge{.count = std::size_t{1} << 26};  // 256 MiB of float32 per block: far beyond any LLC
    for (Op op : {Op::broadcast, Op::reduce, Op::allreduce, Op::allgather, Op::reduce_scatter}) {
      const AlgoEntry* e = Registry::get().find(op, "shm", "any");
      ASSERT_TRUE(e && e->traits.claims) << op_name(op);
      const ClaimChoice staged = e->traits.claims(pm, 2, huge, false);
      EXPECT_LE(staged.traffic_bytes, e->traffic(2, CollArgs{.count = schedules::peer::stage_step(pm, huge)}, false))
          << op_name(e->op) << ": a round moves at most stage_bytes() per block";
      // Claimed by the round's traffic, though the call's is far beyond any LLC (none known: never).
      EXPECT_EQ(staged.claims, static_cast<double>(pm.llc_bytes()) >= staged.traffic_bytes)
          << op_name(e->op) << " staged, " << staged.traffic_bytes << " B of traffic per round";
      EXPECT_LT(staged.traffic_bytes, e->traffic(2, huge, false)) << op_name(e->op);
    }
    const AlgoEntry* allreduce = Registry::get().find(Op::allreduce, "shm", "any");
    ASSERT_NE(allreduce, nullptr);
    const ClaimChoice reg = allreduce->traits.claims(pm, 2, huge, true);
    EXPECT_EQ(reg.traffic_bytes, allreduce->traffic(2, huge, true)) << "registered: the whole call";
    EXPECT_FALSE(reg.claims);
  });
}

// A staged round is the machine's smallest L2, within [kMinStageBytes, kStageBytes].
TEST(Stage, TheL2WithinItsBounds) {
  using schedules::peer::stage_bytes_for;
  static_assert(stage_bytes_for(0) == schedules::peer::kStageBytes, "no L2 known: the cap");
  static_assert(stage_bytes_for(32 << 10) == schedules::peer::kMinStageBytes);
  static_assert(stage_bytes_for(256 << 10) == 256 << 10);
  static_assert(stage_bytes_for(1 << 20) == 1 << 20);
  static_assert(stage_bytes_for(2 << 20) == schedules::peer::kStageBytes);
  ThreadWorld w(1);
  w.run([&](ThreadTransport& t) {
    const PeerMemory& pm = *t.peer_memory();
    const std::size_t l2 = pm.l2_bytes(), stage = schedules::peer::stage_bytes(pm);
    if (l2 == 0) EXPECT_EQ(stage, schedules::peer::kStageBytes) << "no L2 known";
    else EXPECT_EQ(stage, std::clamp(l2, schedules::peer::kMinStageBytes, schedules::peer::kStageBytes));
    EXPECT_EQ(schedules::peer::stage_step(pm, CollArgs{.dtype = DType::float64}), stage / 8);
  });
}

// The shm calls' segment is the largest power of two within the machine's smallest L1d, within
// [kMinSegmentBytes, kMaxSegmentBytes]; --segment overrides it. Each shm algorithm
// reports the segment it works in (ClaimChoice::segment_bytes, recorded as peer_claim).
TEST(Segment, TheL1WithinItsBounds) {
  using schedules::peer::segment_bytes_for;
  static_assert(segment_bytes_for(0) == schedules::peer::kSegmentBytes, "no L1 known");
  static_assert(segment_bytes_for(4 << 10) == schedules::peer::kMinSegmentBytes);
  static_assert(segment_bytes_for(32 << 10) == 32 << 10, "the EPYC's L1d");
  static_assert(segment_bytes_for(48 << 10) == 32 << 10, "the Xeon's: a power of two within it");
  static_assert(segment_bytes_for(64 << 10) == 64 << 10);
  static_assert(segment_bytes_for(1 << 20) == schedules::peer::kMaxSegmentBytes);
  ThreadWorld w(2);
  w.run([&](ThreadTransport& t) {
    const PeerMemory& pm = *t.peer_memory();
    const CollArgs plain{.count = 1 << 20, .dtype = DType::float32},
        given{.count = 1 << 20, .dtype = DType::float32, .segment_bytes = 12 << 10};
    const std::size_t rule = schedules::peer::segment_bytes_for(pm.l1_bytes());
    EXPECT_EQ(schedules::peer::segment_bytes(pm, plain), rule);
    EXPECT_EQ(schedules::peer::segment_bytes(pm, given), 12u << 10) << "--segment";
    for (const Op op : {Op::allreduce, Op::reduce, Op::reduce_scatter, Op::broadcast}) {
      const AlgoEntry* e = Registry::get().find(op, "shm", "any");
      ASSERT_NE(e, nullptr);
      EXPECT_EQ(e->traits.claims(pm, 2, plain, false).segment_bytes, rule) << op_name(op);
      EXPECT_EQ(e->traits.claims(pm, 2, given, false).segment_bytes, 12u << 10) << op_name(op);
      EXPECT_EQ(e->traits.claims(pm, 2, plain, true).segment_bytes, op == Op::broadcast ? 0 : rule)
          << op_name(op) << ": registered";
    }
  });
}

// Every zero-copy ("shm") algorithm with its buffers in peer memory (the registered path).
class Registered : public ::testing::TestWithParam<testing::AlgoAtWorld> {};

TEST_P(Registered, ExactOnEveryCase) {
  const AlgoEntry* entry = GetParam().entry;  // not a structured binding: clang 14 cannot capture one
  const int n = GetParam().world;
  ThreadWorld w(n);
  w.run([&](ThreadTransport& t) {
    PeerMemorySpace space(*t.peer_memory(), t.memory());
    const auto cases = testing::expand(entry->op, n, t.rank(), testing::registered_case_space(n));
    ASSERT_TRUE(testing::exact_on_every_case(t, *entry, cases, &space));
  });
}

INSTANTIATE_TEST_SUITE_P(Shm, Registered, ::testing::ValuesIn(testing::host_algorithms_at({1, 2, 3, 4, 7}, "shm")),
                         testing::algo_at_world_name);

// Staged (plain buffers) at 2 and 3 ranks, where each algorithm's readers claim the stages they
// read (the sliced path, count 40000): every dtype, redop, root and placement of
// registered_case_space, one after another on the same stages, so an owner rewrites lines a
// peer claimed in the previous call. Claims set to pay and the kernel's copy off (before the
// first call, so the probes do not run): the claimed path is tested on every machine, whichever
// way its probes decide.
class StagedClaimed : public ::testing::TestWithParam<testing::AlgoAtWorld> {};

TEST_P(StagedClaimed, ExactOnEveryCase) {
  const AlgoEntry* entry = GetParam().entry;
  const int n = GetParam().world;
  ThreadWorld w(n);
  w.run([&](ThreadTransport& t) {
    PeerMemory& pm = *t.peer_memory();
    pm.set_claim_probe({.pays = true});
    pm.set_kernel_copy_probe({});
    CollArgs sliced{.count = 40000};
    if (pm.llc_bytes() && !schedules::peer::claims(pm, entry->traits.claims(pm, n, sliced, false).traffic_bytes))
      ADD_FAILURE() << "count 40000 does not claim here: the test no longer covers claiming";
    // The sliced path only: the registry suites run the staged small counts.
    testing::CaseSpace space = testing::registered_case_space(n);
    space.counts = {40000};
    ASSERT_TRUE(testing::exact_on_every_case(t, *entry, testing::expand(entry->op, n, t.rank(), space)));
  });
}

INSTANTIATE_TEST_SUITE_P(Shm, StagedClaimed, ::testing::ValuesIn(testing::host_algorithms_at({2, 3}, "shm")),
                         testing::algo_at_world_name);

// A probe memory_for() runs on its first call (schedules/peer.hpp), read by `get`, on 2 thread
// ranks: measured once, collectively, rank 0's verdict on every rank (the same on both), not
// measured again by a second call; unmeasured only with more ranks than cores, then never
// chosen. `check` tests a measured one.
template <class Probe>
void expect_probe_once_on_every_rank(const std::optional<Probe>& (PeerMemory::*get)() const,
                                     const std::function<void(const PeerMemory&, const Probe&)>& check) {
  std::array<Probe, 2> seen{};
  ThreadWorld w(2);
  w.run([&](ThreadTransport& t) {
    PeerMemory& pm = schedules::peer::memory_for(t, "test/probe");
    ASSERT_TRUE((pm.*get)().has_value());
    const Probe p = *(pm.*get)();
    seen[static_cast<std::size_t>(t.rank())] = p;
    if (pm.oversubscribed()) {
      EXPECT_FALSE(p.measured);
      EXPECT_EQ(p.from_bytes, 0u);
      return;
    }
    EXPECT_TRUE(p.measured);
    check(pm, p);
    schedules::peer::memory_for(t, "test/probe");
    EXPECT_TRUE(*(pm.*get)() == p) << "measured again";
  });
  EXPECT_TRUE(seen[0] == seen[1]) << "ranks 0 and 1 differ";
}

// The kernel's single copy instead of staging (schedules::peer::measure_kernel_copy): the
// verdict follows from the rounds it timed. Ranks that are threads read their own process.
TEST(KernelCopy, ProbeMeasuredOnceTheSameOnEveryRank) {
  expect_probe_once_on_every_rank<PeerMemory::KernelCopyProbe>(
      &PeerMemory::kernel_copy_probe, [](const PeerMemory& pm, const PeerMemory::KernelCopyProbe& p) {
        EXPECT_TRUE(p.available) << "a thread reading its own process";
        ASSERT_FALSE(p.bytes.empty());
        EXPECT_EQ(p.bytes.front(), schedules::peer::kKernelProbeMin);
        EXPECT_LE(p.bytes.back(), schedules::peer::stage_bytes(pm));
        EXPECT_GT(p.bytes.back() * 4, schedules::peer::stage_bytes(pm));
        ASSERT_EQ(p.staged_ns.size(), p.bytes.size());
        ASSERT_EQ(p.kernel_ns.size(), p.bytes.size());
        std::size_t from = 0;  // the rule, again: won at every size from here up
        for (std::size_t j = p.bytes.size(); j-- > 0 && p.kernel_ns[j] < p.staged_ns[j];) from = p.bytes[j];
        EXPECT_EQ(p.from_bytes, from);
        for (std::size_t j = 0; j < p.bytes.size(); ++j) {
          EXPECT_GT(p.staged_ns[j], 0);
          EXPECT_GT(p.kernel_ns[j], 0);
        }
      });
}

// By size, from what the probe found; never where it found the kernel's copy unavailable or slower.
TEST(KernelCopy, FromTheProbesSize) {
  ThreadWorld w(2);
  w.run([&](ThreadTransport& t) {
    PeerMemory& pm = *t.peer_memory();
    pm.set_kernel_copy_probe({.available = true, .from_bytes = 64 << 10});
    EXPECT_FALSE(schedules::peer::kernel_copies(pm, (64 << 10) - 1));
    EXPECT_TRUE(schedules::peer::kernel_copies(pm, 64 << 10));
    EXPECT_TRUE(schedules::peer::kernel_copies(pm, std::size_t{1} << 30));
    pm.set_kernel_copy_probe({.measured = true, .available = true, .from_bytes = 0});
    EXPECT_FALSE(schedules::peer::kernel_copies(pm, std::size_t{1} << 30));
    const AlgoEntry* e = Registry::get().find(Op::allgather, "shm", "any");
    ASSERT_TRUE(e && e->traits.claims);
    pm.set_kernel_copy_probe({.available = true, .from_bytes = 4096});
    const CollArgs big{.count = 1024}, small{.count = 1023};  // float32 blocks: 4096 B and 4092 B
    EXPECT_TRUE(e->traits.claims(pm, 2, big, false).kernel_copy);
    EXPECT_FALSE(e->traits.claims(pm, 2, big, true).kernel_copy) << "registered blocks are read in place";
    EXPECT_FALSE(e->traits.claims(pm, 2, small, false).kernel_copy);
    // The reductions by each rank's slice of the message, from kSmallBytes of message, and only up
    // to the largest block the probe measured.
    pm.set_kernel_copy_probe({.available = true, .from_bytes = 16 << 10, .bytes = {4 << 10, 16 << 10, 64 << 10}});
    EXPECT_FALSE(schedules::peer::kernel_copies(pm, (64 << 10) + 1, true));
    EXPECT_TRUE(schedules::peer::kernel_copies(pm, (64 << 10) + 1)) << "allgather: any size from the probe's";
    for (Op op : {Op::reduce, Op::allreduce}) {
      const AlgoEntry* r = Registry::get().find(op, "shm", "any");
      ASSERT_TRUE(r && r->traits.claims);
      auto kernel = [&](std::size_t count, bool reg = false) {
        return r->traits.claims(pm, 2, CollArgs{.count = count}, reg).kernel_copy;
      };
      EXPECT_TRUE(kernel(8192)) << op_name(op) << ": 2 x 16 KiB";
      EXPECT_FALSE(kernel(8191)) << op_name(op);
      EXPECT_TRUE(kernel(32768)) << op_name(op) << ": 2 x 64 KiB";
      EXPECT_FALSE(kernel(32770)) << op_name(op) << ": beyond the probe's largest block";
      EXPECT_FALSE(kernel(8192, true)) << op_name(op) << ": registered inputs are read in place";
    }
    pm.set_kernel_copy_probe({.available = true, .from_bytes = 1, .bytes = {4 << 10}});
    const CollArgs small_message{.count = schedules::peer::kSmallBytes / 4 - 1};
    for (Op op : {Op::reduce, Op::allreduce})
      EXPECT_FALSE(Registry::get().find(op, "shm", "any")->traits.claims(pm, 2, small_message, false).kernel_copy)
          << op_name(op) << ": below kSmallBytes";
  });
}

// A read or write that fails names the algorithm, the peer and the OS's reason, in a TransportError.
TEST(KernelCopy, AFailedReadOrWriteNamesThePeer) {
  ThreadWorld w(1);
  w.run([&](ThreadTransport& t) {
    std::array<std::byte, 64> buf{};
    const auto expect_named = [](const std::function<void()>& copy, const std::string& what) {
      try {
        copy();
        ADD_FAILURE() << "no error: " << what;
      } catch (const TransportError& e) {
        EXPECT_EQ(e.context().peer, 1);
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(std::strerror(EFAULT)), std::string::npos) << e.what();
      }
    };
    const RemoteBuffer nowhere = local_buffer(nullptr);
    expect_named([&] { schedules::peer::read_user_buffer(t, "allgather/shm", 1, nowhere, 0, buf.data(), 64); },
                 "allgather/shm: the kernel's copy (process_vm_readv) of rank 1's buffer failed");
    expect_named([&] { schedules::peer::write_user_buffer(t, "reduce/shm", 1, nowhere, 0, buf.data(), 64); },
                 "reduce/shm: the kernel's copy (process_vm_writev) into rank 1's buffer failed");
  });
}

// Staged allgather, allreduce and reduce (the ops that move by the kernel) where the probe says
// so (set to from 1 byte to 1 MiB, before the first call, so every count of registered_case_space
// does, on every machine; the reductions from kSmallBytes of message, their count 40000): exact on
// every case at 2-4 ranks, both roots, in place and out of place, one call after another.
TEST(KernelCopy, StagedOpsExactOnEveryCase) {
  for (Op op : {Op::allgather, Op::allreduce, Op::reduce}) {
    const AlgoEntry* entry = Registry::get().find(op, "shm", "any");
    ASSERT_TRUE(entry && entry->traits.claims);
    for (int n : {2, 3, 4}) {
      ThreadWorld w(n);
      w.run([&](ThreadTransport& t) {
        PeerMemory& pm = *t.peer_memory();
        pm.set_kernel_copy_probe({.available = true, .from_bytes = 1, .bytes = {std::size_t{1} << 20}});
        ASSERT_TRUE(entry->traits.claims(pm, n, CollArgs{.count = 40000}, false).kernel_copy) << op_name(op);
        const auto cases = testing::expand(entry->op, n, t.rank(), testing::registered_case_space(n));
        ASSERT_TRUE(testing::exact_on_every_case(t, *entry, cases)) << op_name(op) << " n " << n;
      });
    }
  }
}

// Streaming stores for the final copies (schedules::peer::measure_streaming): the verdict follows
// from the copies it timed, at half the L2 x 2^i.
TEST(Streaming, ProbeMeasuredOnceTheSameOnEveryRank) {
  expect_probe_once_on_every_rank<PeerMemory::StreamProbe>(
      &PeerMemory::stream_probe, [](const PeerMemory& pm, const PeerMemory::StreamProbe& p) {
        ASSERT_EQ(p.bytes.size(), static_cast<std::size_t>(schedules::peer::kStreamProbeSizes));
        const std::size_t l2 = pm.l2_bytes()
                                    ? std::clamp<std::size_t>(std::bit_floor(pm.l2_bytes()), 256 << 10, 4 << 20)
                                    : std::size_t{1} << 20;
        for (std::size_t j = 0; j < p.bytes.size(); ++j) EXPECT_EQ(p.bytes[j], l2 / 2 << j);
        ASSERT_EQ(p.plain_ns.size(), p.bytes.size());
        ASSERT_EQ(p.streaming_ns.size(), p.bytes.size());
        std::size_t from = 0;  // the rule, again: won by the margin at every size from here up
        for (std::size_t j = p.bytes.size();
             j-- > 0 && p.streaming_ns[j] <= schedules::peer::kStreamProbeMargin * p.plain_ns[j];)
          from = p.bytes[j];
        EXPECT_EQ(p.from_bytes, from);
        for (std::size_t j = 0; j < p.bytes.size(); ++j) {
          EXPECT_GT(p.plain_ns[j], 0);
          EXPECT_GT(p.streaming_ns[j], 0);
        }
      });
}

// By the call's output, from the probe's size: allgather's whole recv, broadcast's and allreduce's
// message (allreduce's sliced path only); never where the probe found streaming slower, never for
// the ops whose output the reduction writes, nor for the staged broadcast's pipelined copies.
TEST(Streaming, FromTheProbesSizeByTheCallsOutput) {
  ThreadWorld w(2);
  w.run([&](ThreadTransport& t) {
    PeerMemory& pm = *t.peer_memory();
    pm.set_kernel_copy_probe({});
    pm.set_stream_probe({.from_bytes = 1 << 20});
    EXPECT_FALSE(schedules::peer::streams(pm, (1 << 20) - 1));
    EXPECT_TRUE(schedules::peer::streams(pm, 1 << 20));
    const CollArgs mib{.count = 1 << 18}, less{.count = (1 << 18) - 1};  // float32: 1 MiB and 4 bytes less
    const CollArgs half{.count = 1 << 17};                                // a 512 KiB allgather block: 1 MiB of recv
    auto streams = [&](Op op, const CollArgs& a, bool reg) {
      const AlgoEntry* e = Registry::get().find(op, "shm", "any");
      return e && e->traits.claims && e->traits.claims(pm, 2, a, reg).streams;
    };
    EXPECT_TRUE(streams(Op::broadcast, mib, true));
    EXPECT_FALSE(streams(Op::broadcast, less, true));
    EXPECT_FALSE(streams(Op::broadcast, mib, false)) << "staged broadcast";
    for (bool reg : {false, true}) {
      EXPECT_TRUE(streams(Op::allreduce, mib, reg)) << "registered " << reg;
      EXPECT_FALSE(streams(Op::allreduce, less, reg)) << "registered " << reg;
      EXPECT_TRUE(streams(Op::allgather, half, reg)) << "registered " << reg;
      EXPECT_FALSE(streams(Op::allgather, CollArgs{.count = (1 << 17) - 1}, reg)) << "registered " << reg;
      for (Op op : {Op::reduce, Op::reduce_scatter}) EXPECT_FALSE(streams(op, mib, reg)) << op_name(op);
    }
    pm.set_stream_probe({.measured = true, .from_bytes = 0});
    EXPECT_FALSE(schedules::peer::streams(pm, std::size_t{1} << 30));
    EXPECT_FALSE(streams(Op::allgather, mib, true));
  });
}

// allgather, broadcast and allreduce with every final copy streamed (the probe set to from 1
// byte, before the first call, so on every machine): exact on every case of
// registered_case_space at 2-4 ranks (under ASan 2 and 3: 5.8 s with 4), registered and (but
// broadcast) staged, in place and out of place, one call after another on the same buffers.
TEST(Streaming, ShmOpsExactOnEveryCase) {
  const std::vector<int> worlds = testing::kSanitizerBuild ? std::vector<int>{2, 3} : std::vector<int>{2, 3, 4};
  for (Op op : {Op::allgather, Op::broadcast, Op::allreduce}) {
    const AlgoEntry* entry = Registry::get().find(op, "shm", "any");
    ASSERT_TRUE(entry && entry->traits.claims);
    for (int n : worlds) {
      for (bool reg : {false, true}) {
        if (op == Op::broadcast && !reg) continue;  // staged broadcast does not stream
        ThreadWorld w(n);
        w.run([&](ThreadTransport& t) {
          PeerMemory& pm = *t.peer_memory();
          pm.set_stream_probe({.from_bytes = 1});
          pm.set_kernel_copy_probe({});  // staged allreduce by the kernel's copy streams nothing
          ASSERT_TRUE(entry->traits.claims(pm, n, CollArgs{.count = 40000}, reg).streams);
          PeerMemorySpace space(pm, t.memory());
          const auto cases = testing::expand(op, n, t.rank(), testing::registered_case_space(n));
          ASSERT_TRUE(testing::exact_on_every_case(t, *entry, cases, reg ? &space : nullptr))
              << op_name(op) << " n " << n << " registered " << reg;
        });
      }
    }
  }
}

}  // namespace
}  // namespace collbench
