// The floor of a message-free exchange between two cores: two processes (fork) share one
// anonymous mapping and pass a 64-bit flag back and forth, each on its own cache line, with
// release stores and acquire loads: what a zero-copy algorithm's flag wait costs at best.
// Prints the one-way time (half a round trip) and the time per symmetric exchange (both
// raise, then both wait: the lockstep of back-to-back small allreduces), median of 7 runs;
// and the exchange timed as collbench's per-iteration mode times a call: both processes spin
// until an agreed start on the shared steady clock, exchange, and the sample is the later of
// the two finishing times from that start (p5/p50/p95 over 20000 starts 5 us apart).
//   build/bench/flag_latency [round trips per run, default 200000]
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Flag = std::atomic<std::uint64_t>;

// One run: the child answers (ping-pong) or raises alongside (exchange); returns ns per round.
double run(Flag& mine, Flag& theirs, long rounds, bool pingpong) {
  mine.store(0);
  theirs.store(0);
  const pid_t child = fork();
  if (child < 0) std::exit(1);
  if (child == 0) {
    for (std::uint64_t i = 1; i <= static_cast<std::uint64_t>(rounds); ++i) {
      if (pingpong)
        while (mine.load(std::memory_order_acquire) < i) {
        }
      theirs.store(i, std::memory_order_release);
      if (!pingpong)
        while (mine.load(std::memory_order_acquire) < i) {
        }
    }
    _exit(0);
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t i = 1; i <= static_cast<std::uint64_t>(rounds); ++i) {
    mine.store(i, std::memory_order_release);
    while (theirs.load(std::memory_order_acquire) < i) {
    }
  }
  const auto t1 = std::chrono::steady_clock::now();
  waitpid(child, nullptr, 0);
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(rounds);
}

double median_of(Flag& a, Flag& b, long rounds, bool pingpong) {
  std::vector<double> v;
  for (int k = 0; k < 7; ++k) v.push_back(run(a, b, rounds, pingpong));
  std::nth_element(v.begin(), v.begin() + 3, v.end());
  return v[3];
}

// The clock-started exchange: samples (us) of max over both processes of (finish - start).
std::vector<double> clock_started(Flag& mine, Flag& theirs, double* child_us, int n) {
  using Clock = std::chrono::steady_clock;
  mine.store(0);
  theirs.store(0);
  const auto first = Clock::now() + std::chrono::milliseconds(20);
  auto exchange = [&](Flag& own, Flag& peer, double* out) {
    for (int i = 0; i < n; ++i) {
      const auto at = first + std::chrono::microseconds(5 * i);
      while (Clock::now() < at) {
      }
      own.store(static_cast<std::uint64_t>(i) + 1, std::memory_order_release);
      while (peer.load(std::memory_order_acquire) < static_cast<std::uint64_t>(i) + 1) {
      }
      out[i] = std::chrono::duration<double, std::micro>(Clock::now() - at).count();
    }
  };
  const pid_t child = fork();
  if (child < 0) std::exit(1);
  if (child == 0) {
    exchange(theirs, mine, child_us);
    _exit(0);
  }
  std::vector<double> us(static_cast<std::size_t>(n));
  exchange(mine, theirs, us.data());
  waitpid(child, nullptr, 0);
  for (int i = 0; i < n; ++i) us[static_cast<std::size_t>(i)] = std::max(us[static_cast<std::size_t>(i)], child_us[i]);
  us.erase(us.begin(), us.begin() + 100);  // warm-up
  std::sort(us.begin(), us.end());
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? std::atol(argv[1]) : 200000;
  if (rounds <= 0) {
    std::fprintf(stderr, "flag_latency: bad round count '%s'\n", argv[1]);
    return 2;
  }
  constexpr int kStarts = 20000;
  void* p = mmap(nullptr, 4096 + kStarts * sizeof(double), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 1;
  auto* line = static_cast<Flag*>(p);
  Flag& a = *new (&line[0]) Flag(0);  // cache line 0
  Flag& b = *new (&line[8]) Flag(0);  // cache line 1
  const double rt = median_of(a, b, rounds, true);
  const double ex = median_of(a, b, rounds, false);
  std::printf("flag one way: %.1f ns (round trip %.1f ns); symmetric exchange: %.1f ns per call\n", rt / 2, rt, ex);
  const std::vector<double> cs =
      clock_started(a, b, reinterpret_cast<double*>(static_cast<std::byte*>(p) + 4096), kStarts);
  const auto at = [&](double q) { return cs[static_cast<std::size_t>(q * static_cast<double>(cs.size() - 1))]; };
  std::printf("clock-started exchange (later of the two, from the agreed start): p5 %.3f p50 %.3f p95 %.3f us\n",
              at(0.05), at(0.5), at(0.95));
  return 0;
}
