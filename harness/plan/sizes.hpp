#pragma once
// Message sizes: parsing "64K"-style values, and the list of points a sweep measures.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/collective.hpp"

namespace collbench {

// "8", "64K", "16M", "1G", "1KiB", "2MB", "1.5M" -> bytes. Suffixes K/M/G/T (any case, with
// an optional "B" or "iB") are powers of 1024; a plain "B" means bytes. A decimal fraction is
// accepted only when the result is a whole number of bytes (1.5K = 1536; 1.5 is refused).
// Throws UsageError on empty input, a sign, an unknown suffix, garbage or overflow of 64 bits.
std::uint64_t parse_size(std::string_view text);

// "8", "64K", "16M", "1G" when exact, otherwise the plain byte count (table labels).
std::string format_size(std::uint64_t bytes);

// Requested sizes: min, then ×factor (geometric, factor >= 2) or +step (linear, step > 0)
// while <= max; max itself is always included. Empty if min > max.
std::vector<std::uint64_t> size_steps(std::uint64_t min, std::uint64_t max, std::uint64_t factor,
                                      std::uint64_t step);

// One measured size: `bytes` is what nccl-tests prints as size (for the n-chunk ops, the whole
// n-chunk array), `chunk_count` the per-rank element count passed as CollArgs::count.
struct SizePoint {
  std::uint64_t bytes = 0;
  std::uint64_t chunk_count = 0;
  std::uint64_t total_count = 0;  // bytes / dtype size (the JSON "count")
};

// How many chunks `bytes` is split into (OpTraits::size_chunks): n for the n-chunk ops, else 1.
inline int size_chunks(Op op, int world_size) {
  return static_cast<int>(extent_chunks(op_traits(op).size_chunks, world_size));
}

// Each requested size rounded DOWN to a whole number of elements per chunk
// (granule = chunks × elem_size), but a size > 0 to at least one element per chunk: a 0-byte
// point only where 0 was asked for (-b 1 -e 6 of float32: one 4-byte point, not 0 and 4);
// repeats after rounding are dropped (first kept).
std::vector<SizePoint> size_points(const std::vector<std::uint64_t>& requested, int chunks, std::size_t elem_size);

}  // namespace collbench
