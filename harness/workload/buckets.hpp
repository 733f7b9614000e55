#pragma once
// PyTorch DDP gradient buckets: which parameters' gradients are all-reduced together, and in
// what order the buckets become ready during backward.
//
// Why this rule: DDP (since 1.x) builds its buckets once more after the first iteration, in the
// order the gradients actually became ready (Reducer::rebuild_buckets, run from
// DistributedDataParallel._rebuild_buckets), via compute_bucket_assignment_by_size with the
// limits [first_bucket_bytes_cap (1 MiB), bucket_cap_mb]: a small first bucket so the first
// all-reduce starts early in backward, then full-size ones. The very first iteration of recent
// PyTorch uses other buckets (one bucket over everything), but every later iteration uses the
// rebuilt ones, so collbench models that steady state.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collectives/core/dtype.hpp"
#include "harness/workload/model.hpp"

namespace collbench::workload {

struct Bucket {
  std::vector<std::size_t> params;  // indices into Model::params, in the order added
  DType dtype = DType::float32;
  std::uint64_t count = 0;  // elements
  std::uint64_t bytes = 0;
};

// compute_bucket_assignment_by_size over `ready` (a permutation of the param indices, in
// gradient-ready order): one open bucket per dtype; a param joins its dtype's open bucket, which
// closes once its bytes reach (>=) the limit: `first_cap_bytes` for a dtype's first bucket,
// `cap_bytes` after (so a param larger than the limit is a bucket of its own). Open buckets are
// closed at the end in the reverse of the order their dtypes first appeared, as DDP does. Returned in closing order, which
// is the order they become ready in backward. `grad_dtype` replaces every param's dtype.
// Throws UsageError when a cap is 0, std::invalid_argument when `ready` is not a permutation.
std::vector<Bucket> assign_buckets(const Model& m, std::span<const std::size_t> ready, std::uint64_t cap_bytes,
                                   std::uint64_t first_cap_bytes, std::optional<DType> grad_dtype);

// n-1, ..., 0: DDP's approximation of the gradient-ready order (backward runs layers in reverse).
std::vector<std::size_t> reverse_registration_order(const Model& m);

// A measured ready order (e.g. logged from a real backward): a text file with one parameter
// name per line ('#' comments and blank lines ignored) or a JSON list of names (a .json file,
// or text starting with '['). Every parameter of `m` exactly once; anything else is a
// UsageError naming the file and the first offending name and line/entry.
std::vector<std::size_t> load_ready_order(const std::string& path, const Model& m);
// The same from the file's bytes (`path` names it in messages).
std::vector<std::size_t> parse_ready_order(const std::string& text, const std::string& path, const Model& m);

}  // namespace collbench::workload
