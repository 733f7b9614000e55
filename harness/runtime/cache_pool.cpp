#include "harness/runtime/cache_pool.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

namespace collbench {
namespace {

std::string first_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace

std::uint64_t parse_sysfs_cache_size(const std::string& text) {
  std::size_t i = 0;
  std::uint64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) v = v * 10 + (text[i++] - '0');
  if (i == 0) return 0;
  const std::string unit = text.substr(i);
  if (unit.empty() || unit == "\n") return v;
  if (unit[0] == 'K') return v << 10;
  if (unit[0] == 'M') return v << 20;
  if (unit[0] == 'G') return v << 30;
  return 0;
}

LastLevelCache last_level_cache_from(const std::string& dir) {
  LastLevelCache best{0, "sysfs"};
  int best_level = -1;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind("index", 0) != 0) continue;
    const std::string type = first_line(e.path() / "type");
    if (type != "Data" && type != "Unified") continue;  // instruction caches hold no buffers
    const int level = std::atoi(first_line(e.path() / "level").c_str());
    const std::uint64_t bytes = parse_sysfs_cache_size(first_line(e.path() / "size"));
    if (bytes && (level > best_level || (level == best_level && bytes > best.bytes))) {
      best_level = level;
      best.bytes = bytes;
    }
  }
  return best;
}

LastLevelCache last_level_cache() {
  LastLevelCache c = last_level_cache_from("/sys/devices/system/cpu/cpu0/cache");
  if (c.bytes) return c;
  for (int name : {_SC_LEVEL4_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long v = sysconf(name);
    if (v > 0) return {static_cast<std::uint64_t>(v), "sysconf"};
  }
  return {32ull << 20, "assumed"};
}

std::uint64_t cold_pool_target(const Settings& s, std::uint64_t llc_bytes) {
  return s.cache_pool_bytes ? s.cache_pool_bytes : 2 * llc_bytes;
}

ColdPool cold_pool_layout(std::uint64_t send_bytes, std::uint64_t recv_bytes, std::uint64_t target) {
  const auto page = [](std::uint64_t b) { return (b + kColdPoolPage - 1) / kColdPoolPage * kColdPoolPage; };
  ColdPool p;
  p.send_stride = page(send_bytes);
  p.recv_stride = page(recv_bytes);
  const std::uint64_t per_set = p.send_stride + p.recv_stride;
  if (per_set == 0) return p;
  p.sets = std::max<std::uint64_t>(2, (target + per_set - 1) / per_set);
  return p;
}

std::uint64_t verified_set_count(std::uint64_t sets, std::uint64_t set_bytes) {
  const std::uint64_t by_bytes = set_bytes ? std::max<std::uint64_t>(2, kMaxVerifiedBytes / set_bytes) : sets;
  return std::min({sets, kMaxVerifiedSets, by_bytes});
}

}  // namespace collbench
