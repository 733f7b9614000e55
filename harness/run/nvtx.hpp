#pragma once
// NVTX ranges in the "collbench" domain, so Nsight Systems (or any NVTX tool) shows each
// point, its warm-up, every timed iteration and the verification on the timeline. Names are
// registered once per point; a push/pop with no tool attached costs a few ns. Built without
// NVTX (COLLBENCH_HAVE_NVTX unset), these classes are empty and compile to nothing.
#include <cstdint>
#include <string>

#if COLLBENCH_HAVE_NVTX
#include <nvtx3/nvtx3.hpp>
#endif

namespace collbench::nvtx {

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

// The ranges of one measured point: "<what>" for the point, "warmup <what>", "iter <what>"
// (payload = iteration), "batch <what>" and "verify <what>".
struct PointLabels {
  explicit PointLabels(const std::string& what)
      : point(what), warmup("warmup " + what), iter("iter " + what), batch("batch " + what), verify("verify " + what) {}
  Label point, warmup, iter, batch, verify;
};

}  // namespace collbench::nvtx
