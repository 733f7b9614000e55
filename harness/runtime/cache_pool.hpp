#pragma once
// --cache cold: how big the last-level cache is, and how a point's send/recv sets are laid out
// in a pool larger than it, so every call starts on data the previous calls evicted (IMB's
// -off_cache). Pure but for the sysfs read.
#include <cstdint>
#include <string>

#include "harness/plan/run_config.hpp"

namespace collbench {

// The largest data/unified CPU cache this process can see, and where the number came from:
// "sysfs" (/sys/devices/system/cpu/cpu0/cache/index*/), "sysconf" (_SC_LEVEL3/2_CACHE_SIZE), or
// "assumed" (neither said: 32 MiB).
struct LastLevelCache {
  std::uint64_t bytes = 0;
  std::string source;
};
LastLevelCache last_level_cache();
// From a sysfs cache folder's index*/ entries (exposed for tests; bytes 0 when none readable).
LastLevelCache last_level_cache_from(const std::string& sysfs_cache_dir);
// "266240K" -> 272629760 (sysfs' size format); 0 when not a size.
std::uint64_t parse_sysfs_cache_size(const std::string& text);

// The pool per rank a cold point aims for: --cache-pool, else 2x the LLC.
std::uint64_t cold_pool_target(const Settings& s, std::uint64_t llc_bytes);

// Sets of (send, recv), each buffer starting on its own 4 KiB page (hardware prefetchers stop
// at page boundaries, so one call never pulls in the next set's lines), at least two sets and
// at least `target` bytes in all. Set k: send at k*send_stride, recv at k*recv_stride of
// their own pools. A point with nothing to move (0 bytes) has one set.
struct ColdPool {
  std::uint64_t sets = 1;
  std::uint64_t send_stride = 0, recv_stride = 0;
  std::uint64_t bytes() const { return sets * (send_stride + recv_stride); }
};
inline constexpr std::uint64_t kColdPoolPage = 4096;
ColdPool cold_pool_layout(std::uint64_t send_bytes, std::uint64_t recv_bytes, std::uint64_t target);

// How many of a cold point's sets verification refills, runs and checks: every set up to 64
// and up to 64 MiB of sets, at least two (the first and the last) where there are two. A check
// regenerates every rank's inputs, so its cost grows with the bytes checked; the sets all hold
// the same inputs, and two already show an algorithm that keeps the previous call's buffers.
inline constexpr std::uint64_t kMaxVerifiedSets = 64;
inline constexpr std::uint64_t kMaxVerifiedBytes = 64ull << 20;
std::uint64_t verified_set_count(std::uint64_t sets, std::uint64_t set_bytes);

}  // namespace collbench
