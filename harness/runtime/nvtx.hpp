#pragma once
// NVTX ranges in the "collbench" domain, so Nsight Systems (or any NVTX tool) shows each
// point, its warm-up, every timed iteration and the verification on the timeline. Names are
// registered once per point; a push/pop with no tool attached costs a few ns. Built without
// NVTX (COLLBENCH_HAVE_NVTX unset), these classes are empty and compile to nothing.
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#if COLLBENCH_HAVE_NVTX
#include <nvtx3/nvtx3.hpp>
#endif

namespace collbench::nvtx {

// Every range collbench pushes, defined once: the names are made from these patterns
// (range_name), the docs' table (docs/profiling.md, "What the timeline shows") is checked
// against this list by unit.harness (tests/harness/test_facts.cpp), and harness.nvtx
// checks that every range a run pushes matches a documented row at a documented level, and
// that every row is pushed. "<point>" is a point's name: a row without "<point>" in it.
enum class RangeKind { point, interleaved, pingpong, ddp, warmup, iter, batch, verify };

struct RangeInfo {
  RangeKind kind;
  std::string_view pattern;  // "<key>" is filled in by range_name
  std::string_view levels;   // nesting depths in the domain, e.g. "0, 1"; "" when never a range itself
  std::string_view spans;    // one line: the start of the docs' "what it spans" cell
  std::string_view payload;  // the range's value, "" when none
};

inline constexpr std::array kRanges{
    RangeInfo{RangeKind::point, "<op>/<algo> <bytes>B", "0",
              "one point: the warm-up, timing and verification of one algorithm at one size", ""},
    RangeInfo{RangeKind::interleaved, "<op> <bytes>B interleaved", "0",
              "with `--interleave`: every algorithm of one size", ""},
    RangeInfo{RangeKind::pingpong, "pingpong/<method> <src>-<dst> <bytes>B", "0",
              "one pingpong point, on the pair's two ranks only", ""},
    RangeInfo{RangeKind::ddp, "ddp <model>/<algo>", "",
              "`--workload ddp`: the point's name, no range of its own", ""},
    RangeInfo{RangeKind::warmup, "warmup <point>", "0, 1", "the warm-up calls", ""},
    RangeInfo{RangeKind::iter, "iter <point>", "0, 1", "one timed sample of one call",
              "the iteration index"},
    RangeInfo{RangeKind::batch, "batch <point>", "1", "one sample of many calls back to back",
              "the first call's index"},
    RangeInfo{RangeKind::verify, "verify <point>", "0, 1", "the verification run (`-c 1`)", ""},
};

constexpr const RangeInfo& range_info(RangeKind k) {
  for (const auto& r : kRanges)
    if (r.kind == k) return r;
  return kRanges.front();  // not reached: every kind has a row (checked by unit.harness)
}

// The kind's pattern with each "<key>" replaced by its value, e.g.
// range_name(RangeKind::iter, {{"point", "allreduce/ring 8B"}}) == "iter allreduce/ring 8B".
inline std::string range_name(RangeKind k, std::initializer_list<std::pair<std::string_view, std::string>> fields) {
  std::string s(range_info(k).pattern);
  for (const auto& [key, value] : fields) {
    std::string tag;  // "<key>", appended (GCC 12 misreads "<" + string as an overlapping copy: -Wrestrict)
    tag.append("<").append(key).append(">");
    for (std::size_t at = s.find(tag); at != std::string::npos; at = s.find(tag, at + value.size()))
      s.replace(at, tag.size(), value);
  }
  return s;
}

#if COLLBENCH_HAVE_NVTX

struct Domain {
  static constexpr char const* name{"collbench"};
};

// A registered range name, e.g. "iter allreduce/ring 1048576B".
class Label {
 public:
  explicit Label(const std::string& text) : text_(text), reg_(text_.c_str()) {}
  Label(const Label&) = delete;
  Label& operator=(const Label&) = delete;
  const nvtx3::registered_string_in<Domain>& get() const { return reg_; }

 private:
  std::string text_;
  nvtx3::registered_string_in<Domain> reg_;
};

class Range {
 public:
  explicit Range(const Label& l) : r_(nvtx3::event_attributes{l.get()}) {}
  // `payload` shows as the range's value (the iteration index).
  Range(const Label& l, std::int64_t payload) : r_(nvtx3::event_attributes{l.get(), nvtx3::payload{payload}}) {}
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;

 private:
  nvtx3::scoped_range_in<Domain> r_;
};

#else

class Label {
 public:
  explicit Label(const std::string&) {}
};
class Range {
 public:
  explicit Range(const Label&) {}
  Range(const Label&, std::int64_t) {}
};

#endif

// The ranges of one measured point named `what` (a point, pingpong or ddp name above): the
// point itself, and its warmup, iter (payload = iteration), batch and verify ranges.
struct PointLabels {
  explicit PointLabels(const std::string& what)
      : point(what),
        warmup(range_name(RangeKind::warmup, {{"point", what}})),
        iter(range_name(RangeKind::iter, {{"point", what}})),
        batch(range_name(RangeKind::batch, {{"point", what}})),
        verify(range_name(RangeKind::verify, {{"point", what}})) {}
  Label point, warmup, iter, batch, verify;
};

}  // namespace collbench::nvtx
