#include "harness/plan/sizes.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "collectives/core/error.hpp"

namespace collbench {
namespace {

constexpr const char* kSizeAccepted =
    "a whole number of bytes with an optional K, M, G or T suffix (powers of 1024; KiB/KB, MiB/MB... too), "
    "e.g. 8, 64K, 16M, 1G, 1.5M";
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
constexpr int kMaxDecimals = 9;

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw UsageError("bad size '" + std::string(text) + "' (" + why + "); accepted: " + kSizeAccepted);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Scale of a suffix ("", "B", "K", "KB", "KiB", ...), or 0 when unknown.
std::uint64_t suffix_scale(std::string_view s) {
  if (s.empty() || s == "B" || s == "b") return 1;
  const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  const std::string_view rest = s.substr(1);
  if (!(rest.empty() || rest == "B" || rest == "b" || rest == "iB" || rest == "ib")) return 0;
  switch (u) {
    case 'K': return 1ull << 10;
    case 'M': return 1ull << 20;
    case 'G': return 1ull << 30;
    case 'T': return 1ull << 40;
    default: return 0;
  }
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
  if (text.empty()) bad(text, "empty");
  if (text[0] == '-') bad(text, "negative");
  std::size_t i = 0;
  unsigned __int128 whole = 0;
  for (; i < text.size() && is_digit(text[i]); ++i) {
    whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
    if (whole > kMax) bad(text, "too large for 64 bits");
  }
  if (i == 0) bad(text, "no digits");
  std::uint64_t frac = 0, frac_scale = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    const std::size_t start = i;
    for (; i < text.size() && is_digit(text[i]); ++i) {
      if (i - start >= kMaxDecimals) bad(text, "too many decimals");
      frac = frac * 10 + static_cast<unsigned>(text[i] - '0');
      frac_scale *= 10;
    }
    if (i == start) bad(text, "no digits after the decimal point");
  }
  const std::string_view suffix = text.substr(i);
  const std::uint64_t scale = suffix_scale(suffix);
  if (scale == 0) bad(text, "unknown suffix '" + std::string(suffix) + "'");
  const unsigned __int128 frac_bytes = static_cast<unsigned __int128>(frac) * scale;
  if (frac_bytes % frac_scale != 0) bad(text, "not a whole number of bytes");
  const unsigned __int128 total = whole * scale + frac_bytes / frac_scale;
  if (total > kMax) bad(text, "too large for 64 bits");
  return static_cast<std::uint64_t>(total);
}

std::string format_size(std::uint64_t bytes) {
  static constexpr struct {
    int shift;
    char suffix;
  } kUnits[] = {{40, 'T'}, {30, 'G'}, {20, 'M'}, {10, 'K'}};
  for (const auto& u : kUnits)
    if (bytes >= (1ull << u.shift) && bytes % (1ull << u.shift) == 0)
      return std::to_string(bytes >> u.shift) + u.suffix;
  return std::to_string(bytes);
}

std::vector<std::uint64_t> size_steps(std::uint64_t min, std::uint64_t max, std::uint64_t factor, std::uint64_t step) {
  std::vector<std::uint64_t> out;
  if (min > max) return out;
  std::uint64_t s = min;
  while (true) {
    out.push_back(s);
    std::uint64_t next;
    if (step > 0) {
      if (s > max - step) break;
      next = s + step;
    } else {
      if (s == 0) next = 1;  // a geometric sweep from 0 continues at 1 byte
      else if (s > max / factor) break;
      else next = s * factor;
    }
    if (next > max) break;
    s = next;
  }
  if (out.back() != max) out.push_back(max);  // inclusive of max, like an explicit -e
  return out;
}

std::vector<SizePoint> size_points(const std::vector<std::uint64_t>& requested, int chunks, std::size_t elem_size) {
  std::vector<SizePoint> out;
  const std::uint64_t granule = static_cast<std::uint64_t>(chunks) * elem_size;
  for (std::uint64_t req : requested) {
    // Below one element per chunk: one element (a 0-byte point only where 0 was asked for).
    const std::uint64_t chunk_count = req == 0 ? 0 : std::max<std::uint64_t>(req / granule, 1);
    const std::uint64_t bytes = chunk_count * granule;
    if (!out.empty() && out.back().bytes == bytes) continue;
    out.push_back({bytes, chunk_count, bytes / elem_size});
  }
  return out;
}

}  // namespace collbench
