#pragma once
// `--algo auto --tuning FILE`: the algorithm a tuning file (colltune's YAML, schema
// collbench-tuning/1, results/README.md "Tuning files") names for an op, backend, device, node
// layout and message size. Pure: parsed from the file's text (rank 0 reads the file and every
// rank parses the same bytes it broadcasts, so ranks cannot choose differently).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/op_traits.hpp"

namespace collbench {

// A node layout as tuning files key it: the rank count of each node, in node order.
struct TunedLayout {
  std::vector<int> ranks_per_node;
  int nodes() const { return static_cast<int>(ranks_per_node.size()); }
  int world_size() const;
  std::string label() const;  // "2x2", or "[3, 1]" when uneven
  friend bool operator==(const TunedLayout&, const TunedLayout&) = default;
};

struct TunedChoice {
  std::string algo;    // what the file names, or "library" when nothing applies
  std::string origin;  // "FILE:LINE" of the range used, or "none" (fell back to the library)
  std::string match;   // "exact", "nearest 2x2" (another layout's entry), or why none applied
};

// The file's bytes; throws UsageError ("--tuning PATH: cannot read (...)").
std::string read_tuning_file(const std::string& path);

class Tuning {
 public:
  // Throws UsageError naming the file and line on anything that is not a valid tuning file.
  static Tuning parse(const std::string& text, const std::string& path);

  TunedChoice choose(Op op, const std::string& backend, const std::string& device, const TunedLayout& layout,
                     std::uint64_t bytes) const;
  const std::string& path() const { return path_; }
  // Every algorithm a range names, with its op, backend, device and "FILE:LINE": for a reader
  // that checks the names once, up front (the MPI preload library).
  struct Named {
    Op op;
    std::string backend, device, algo, origin;
  };
  std::vector<Named> named() const;

 private:
  struct Range {
    std::uint64_t min_bytes = 0;
    std::optional<std::uint64_t> max_bytes;  // none: unbounded
    std::string algo;
    int line = 0;
  };
  struct Entry {
    Op op;
    std::string backend, device;
    TunedLayout layout;
    std::vector<Range> ranges;
    int line = 0;
  };
  std::string path_;
  std::vector<Entry> entries_;
};

}  // namespace collbench
