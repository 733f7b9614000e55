#include "harness/plan/sizes.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "collectives/core/error.hpp"
#include "harness/plan/size_grammar.hpp"

namespace collbench {

std::uint64_t parse_size(std::string_view text) {
  const size_grammar::Parsed p = size_grammar::parse(text);
  if (!p.error.empty())
    throw UsageError("bad size '" + std::string(text) + "' (" + p.error + "); accepted: " + size_grammar::kAccepted);
  return p.bytes;
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
