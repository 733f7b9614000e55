#pragma once
// Splitting `count` elements into `parts` contiguous chunks whose sizes differ by at most
// one (the first count % parts chunks get the extra element). Pure; no communication.
#include <cstddef>

namespace collbench::patterns {

struct Range {
  std::size_t offset = 0;  // in elements
  std::size_t count = 0;
  constexpr std::size_t end() const { return offset + count; }
  friend constexpr bool operator==(const Range&, const Range&) = default;
};

constexpr Range chunk(std::size_t count, int parts, int index) {
  const std::size_t p = static_cast<std::size_t>(parts), i = static_cast<std::size_t>(index);
  const std::size_t base = count / p, extra = count % p;
  return {i * base + (i < extra ? i : extra), base + (i < extra ? 1 : 0)};
}

// Chunks [first, last) of a split, as one contiguous range.
constexpr Range chunk_span(std::size_t count, int parts, int first, int last) {
  if (first >= last) return {first < parts ? chunk(count, parts, first).offset : count, 0};
  const Range a = chunk(count, parts, first), b = chunk(count, parts, last - 1);
  return {a.offset, b.end() - a.offset};
}

// Number of pipeline segments of at most `segment_elems` elements covering `count`
// (at least 1, so a zero-count message still takes one step).
constexpr std::size_t num_segments(std::size_t count, std::size_t segment_elems) {
  if (segment_elems == 0 || count == 0) return 1;
  return (count + segment_elems - 1) / segment_elems;
}

}  // namespace collbench::patterns
