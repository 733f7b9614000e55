// The bound under a zero-copy algorithm's copy of a peer's slice: how fast one core copies
// lines another core has just written, against the same copy of lines it wrote itself. Two
// processes (fork) share one anonymous mapping; per round the writer stores S bytes into the
// shared buffer and raises a flag, the reader waits for it and memcpy's the buffer into its
// own; the reader times its copy. The local case is the same with the reader writing the
// buffer itself first. The ratio remote/local is what shm's copy stage can reach of the memcpy
// rate that `efficiency` divides by (docs/measurement.md): its allreduce on 2 ranks reads half
// its input and half its output from the peer's freshly written lines. The cores are 0 and 1
// unless given. Median GB/s (bytes copied / time) over the rounds.
// The second table is what a staged shm algorithm pays next call: the writer's rewrite of the
// lines the reader copied last round, timed by the writer, with the reader leaving them shared
// or claiming them after its copy (schedules::peer::claim, the algorithms' own code); and the
// whole round, rewrite to the reader's copy (and claim) done, which counts what claiming costs
// the reader too: write-backs of the lines it now holds modified, beyond its cache.
// The third and fourth tables are what either core could add to the remote copy (issue 38's
// machine parameters): the writer's CLDEMOTE of each line it wrote (pushing it towards the
// shared cache; a no-op where the CPU lacks it), software prefetch 4 KiB ahead of the reader's
// copy, and the kernel's copy (process_vm_readv, Open MPI's CMA) of the writer's buffer left
// unchanged, as a benchmark's send is: the library's path; then whole rounds (the writer's copy
// in, the reader's copy out) with plain stores, with CLDEMOTE, and with non-temporal stores.
//   build/bench/cross_core_copy [writer cpu, default 0] [reader cpu, default 1]
#include <cpuid.h>
#include <immintrin.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "collectives/schedules/peer.hpp"
#include "collectives/transport/kernel_copy.hpp"

namespace {

using Flag = std::atomic<std::uint64_t>;
using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxBytes = 64u << 20;
// The copy tables start at a few lines: a small call's data cross at the rate of their lines'
// latency, not of a stream (the latency bound of bench/README.md).
constexpr std::size_t kMinCopyBytes = 1u << 10;

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

void spin_until(const Flag& f, std::uint64_t v) {
  while (f.load(std::memory_order_acquire) < v) {
  }
}

double median(std::vector<double>& v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// One measurement: the flags reset, a forked child pinned to writer_cpu runs writer(), this
// process pinned to reader_cpu runs reader(child's pid); exits the program if either cannot pin
// or the child fails.
template <class Writer, class Reader>
void writer_and_reader(Flag& written, Flag& copied, int writer_cpu, int reader_cpu, Writer writer, Reader reader) {
  written.store(0);
  copied.store(0);
  const pid_t child = fork();
  if (child < 0) std::exit(1);
  if (child == 0) {
    if (!pin(writer_cpu)) _exit(1);
    writer();
    _exit(0);
  }
  if (!pin(reader_cpu)) std::exit(1);
  reader(child);
  int st = 0;
  waitpid(child, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    std::fprintf(stderr, "cross_core_copy: the writer on cpu %d failed (exit %d)\n", writer_cpu, WEXITSTATUS(st));
    std::exit(1);
  }
}

// How the writer stores a round (Write) and how the reader gets it (Read).
enum class Write { none, plain, demote, streaming };
enum class Read { memcpy, prefetch, kernel };

bool has_cldemote() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 25)) != 0;  // CPUID.7.0:ECX[25]
}

// Each line the writer just wrote, pushed out of its core's caches towards the shared one.
__attribute__((target("cldemote"))) void demote(std::byte* p, std::size_t bytes) {
  for (std::size_t o = 0; o < bytes; o += 64) _cldemote(p + o);
}

// The writer's round: `bytes` of src into dst (memset when src is null).
void write_round(Write w, std::byte* dst, const std::byte* src, std::size_t bytes, int i) {
  if (w == Write::none) return;
  if (w == Write::streaming) {
    for (std::size_t o = 0; o + 16 <= bytes; o += 16)
      _mm_stream_si128(
          reinterpret_cast<__m128i*>(dst + o),
          src ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + o)) : _mm_set1_epi8(static_cast<char>(i)));
    _mm_sfence();
    return;
  }
  if (src)
    std::memcpy(dst, src, bytes);
  else
    std::memset(dst, i & 0xff, bytes);
  if (w == Write::demote) demote(dst, bytes);
}

// The reader's copy, in 1 KiB pieces each prefetching the lines 4 KiB ahead when asked.
void read_round(Read r, std::byte* dst, const std::byte* src, std::size_t bytes, pid_t writer) {
  if (r == Read::kernel) {
    if (collbench::kernel_read({writer, src}, 0, dst, bytes) != 0) std::exit(4);
    return;
  }
  if (r == Read::memcpy) {
    std::memcpy(dst, src, bytes);
    return;
  }
  constexpr std::size_t kPiece = 1024, kAhead = 4096;
  for (std::size_t o = 0; o < std::min(bytes, kAhead); o += 64)
    _mm_prefetch(reinterpret_cast<const char*>(src + o), _MM_HINT_T0);
  for (std::size_t o = 0; o < bytes; o += kPiece) {
    for (std::size_t q = o + kAhead; q < std::min(bytes, o + kAhead + kPiece); q += 64)
      _mm_prefetch(reinterpret_cast<const char*>(src + q), _MM_HINT_T0);
    std::memcpy(dst + o, src + o, std::min(kPiece, bytes - o));
  }
}

// GB/s of the reader's copies of `bytes`, over `rounds` rounds; the writer stores each round as
// `w` (none: the reader writes the buffer itself first, the local case; with Read::kernel
// nobody rewrites it).
double copy_rate(Flag& written, Flag& copied, std::byte* shared, std::size_t bytes, int rounds, Write w, Read r,
                 int writer_cpu, int reader_cpu) {
  std::vector<double> gbps;
  auto writer = [&] {  // stores the buffer, raises, waits for the copy
    for (int i = 1; i <= rounds; ++i) {
      write_round(w, shared, nullptr, bytes, i);
      written.store(static_cast<std::uint64_t>(i), std::memory_order_release);
      spin_until(copied, static_cast<std::uint64_t>(i));
    }
  };
  auto reader = [&](pid_t child) {
    const bool local = w == Write::none && r != Read::kernel;
    std::vector<std::byte> mine(bytes);
    for (int i = 1; i <= rounds; ++i) {
      spin_until(written, static_cast<std::uint64_t>(i));
      if (local) std::memset(shared, i & 0xff, bytes);
      const auto t0 = Clock::now();
      read_round(r, mine.data(), shared, bytes, child);
      const auto t1 = Clock::now();
      copied.store(static_cast<std::uint64_t>(i), std::memory_order_release);
      if (i > 2) gbps.push_back(static_cast<double>(bytes) / std::chrono::duration<double, std::nano>(t1 - t0).count());
      // the copy saw this round's data (unchanged buffers hold the last writer's)
      if (w != Write::none && mine[bytes / 2] != static_cast<std::byte>(i & 0xff)) std::exit(3);
    }
  };
  writer_and_reader(written, copied, writer_cpu, reader_cpu, writer, reader);
  return median(gbps);
}

// Median us of a whole round timed by the writer: its copy of `bytes` from a private buffer into
// the shared one, stored as `w`, then the reader's memcpy out of it.
double round_us(Flag& written, Flag& copied, std::atomic<double>* result, std::byte* shared, std::size_t bytes,
                int rounds, Write w, int writer_cpu, int reader_cpu) {
  auto writer = [&] {
    std::vector<std::byte> src(bytes, std::byte{1});
    std::vector<double> us;
    for (int i = 1; i <= rounds; ++i) {
      const auto t0 = Clock::now();
      src[bytes / 2] = static_cast<std::byte>(i & 0xff);
      write_round(w, shared, src.data(), bytes, i);
      written.store(static_cast<std::uint64_t>(i), std::memory_order_release);
      spin_until(copied, static_cast<std::uint64_t>(i));
      if (i > 2) us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    result[0].store(median(us));
  };
  auto reader = [&](pid_t) {
    std::vector<std::byte> mine(bytes);
    for (int i = 1; i <= rounds; ++i) {
      spin_until(written, static_cast<std::uint64_t>(i));
      std::memcpy(mine.data(), shared, bytes);
      if (mine[bytes / 2] != static_cast<std::byte>(i & 0xff)) std::exit(3);
      copied.store(static_cast<std::uint64_t>(i), std::memory_order_release);
    }
  };
  writer_and_reader(written, copied, writer_cpu, reader_cpu, writer, reader);
  return result[0].load();
}

// Median ns of the writer's rewrite (memset) of `bytes` the reader copied the round before,
// over `rounds`, and of the whole round (rewrite, then the reader's copy); claim: the reader
// claims them after each copy. The child writes, the parent reads; the child's medians come back
// in `result`.
struct Rewrite {
  double rewrite_ns, round_ns;
};
Rewrite rewrite_ns(Flag& written, Flag& copied, std::atomic<double>* result, std::byte* shared, std::size_t bytes,
                   int rounds, bool claim, int writer_cpu, int reader_cpu) {
  auto writer = [&] {
    std::vector<double> ns, round;
    for (int i = 1; i <= rounds; ++i) {
      const auto t0 = Clock::now();
      std::memset(shared, i & 0xff, bytes);
      const auto t1 = Clock::now();
      written.store(static_cast<std::uint64_t>(i), std::memory_order_release);
      spin_until(copied, static_cast<std::uint64_t>(i));
      if (i > 2) {
        ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
        round.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
      }
    }
    result[0].store(median(ns));
    result[1].store(median(round));
  };
  auto reader = [&](pid_t) {
    std::vector<std::byte> mine(bytes);
    for (int i = 1; i <= rounds; ++i) {
      spin_until(written, static_cast<std::uint64_t>(i));
      std::memcpy(mine.data(), shared, bytes);
      if (claim) collbench::schedules::peer::claim(shared, bytes);
      copied.store(static_cast<std::uint64_t>(i), std::memory_order_release);
    }
  };
  writer_and_reader(written, copied, writer_cpu, reader_cpu, writer, reader);
  return {result[0].load(), result[1].load()};
}

}  // namespace

int main(int argc, char** argv) {
  const int writer = argc > 1 ? std::atoi(argv[1]) : 0, reader = argc > 2 ? std::atoi(argv[2]) : 1;
  // Both cpus usable before any fork: a writer that cannot pin would leave its reader waiting.
  if (writer == reader || !pin(writer) || !pin(reader)) {
    std::fprintf(stderr, "cross_core_copy: cpus %d and %d: need two different cpus this process may run on\n", writer,
                 reader);
    return 2;
  }
  void* p = mmap(nullptr, 4096 + kMaxBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 1;
  auto* line = static_cast<Flag*>(p);
  Flag& written = *new (&line[0]) Flag(0);  // cache line 0
  Flag& copied = *new (&line[8]) Flag(0);   // cache line 1
  auto* result = new (&line[16]) std::atomic<double>[2]{0, 0};  // cache line 2
  auto* shared = static_cast<std::byte*>(p) + 4096;
  std::memset(shared, 0, kMaxBytes);  // fault every page in before timing
  std::printf("cpu %d writes, cpu %d copies; median GB/s of the copy\n%10s %12s %12s %8s\n", writer, reader, "bytes",
              "local", "remote", "ratio");
  for (std::size_t bytes = kMinCopyBytes; bytes <= kMaxBytes; bytes *= 4) {
    const int rounds = static_cast<int>(std::clamp<std::size_t>((512u << 20) / bytes, 20, 2000));
    const double local = copy_rate(written, copied, shared, bytes, rounds, Write::none, Read::memcpy, writer, reader);
    const double remote = copy_rate(written, copied, shared, bytes, rounds, Write::plain, Read::memcpy, writer, reader);
    std::printf("%10zu %12.2f %12.2f %8.3f\n", bytes, local, remote, remote / local);
  }
  std::printf("\ncpu %d rewrites what cpu %d copied; median us of the rewrite and of the whole round\n"
              "%10s %12s %12s %8s %14s %14s %8s\n",
              writer, reader, "bytes", "shared", "claimed", "ratio", "round shared", "round claimed", "ratio");
  for (std::size_t bytes = 16u << 10; bytes <= (16u << 20); bytes *= 4) {
    const int rounds = static_cast<int>(std::clamp<std::size_t>((256u << 20) / bytes, 20, 2000));
    const Rewrite s = rewrite_ns(written, copied, result, shared, bytes, rounds, false, writer, reader);
    const Rewrite c = rewrite_ns(written, copied, result, shared, bytes, rounds, true, writer, reader);
    std::printf("%10zu %12.2f %12.2f %8.3f %14.2f %14.2f %8.3f\n", bytes, s.rewrite_ns / 1e3, c.rewrite_ns / 1e3,
                s.rewrite_ns / c.rewrite_ns, s.round_ns / 1e3, c.round_ns / 1e3, s.round_ns / c.round_ns);
  }
  const bool cld = has_cldemote();
  std::printf(
      "\nthe remote copy with what either core can add; median GB/s of the reader's copy (cldemote: %s)\n"
      "%10s %12s %12s %12s %14s\n",
      cld ? "this CPU has it" : "a no-op here", "bytes", "remote", "cldemote", "prefetch 4K", "kernel, cached");
  for (std::size_t bytes = kMinCopyBytes; bytes <= (16u << 20); bytes *= 4) {
    const int rounds = static_cast<int>(std::clamp<std::size_t>((512u << 20) / bytes, 20, 2000));
    const auto rate = [&](Write w, Read r) {
      return copy_rate(written, copied, shared, bytes, rounds, w, r, writer, reader);
    };
    std::printf("%10zu %12.2f %12.2f %12.2f %14.2f\n", bytes, rate(Write::plain, Read::memcpy),
                rate(Write::demote, Read::memcpy), rate(Write::plain, Read::prefetch), rate(Write::none, Read::kernel));
  }
  std::printf(
      "\nwhole rounds, cpu %d's copy in and cpu %d's copy out; median us by the writer's stores\n"
      "%10s %12s %12s %12s\n",
      writer, reader, "bytes", "plain", "cldemote", "non-temporal");
  for (std::size_t bytes = 16u << 10; bytes <= kMaxBytes; bytes *= 4) {
    const int rounds = static_cast<int>(std::clamp<std::size_t>((512u << 20) / bytes, 10, 2000));
    const auto us = [&](Write w) {
      return round_us(written, copied, result, shared, bytes, rounds, w, writer, reader);
    };
    std::printf("%10zu %12.2f %12.2f %12.2f\n", bytes, us(Write::plain), us(Write::demote), us(Write::streaming));
  }
  return 0;
}
