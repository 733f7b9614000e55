#pragma once
// The cross product of cases every algorithm is checked on (thread and MPI suites share it).
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/registry.hpp"
#include "collectives/verify/check.hpp"

namespace collbench::testing {

// One registered host algorithm ("any" backend) at one world size: what the thread-transport
// suites are parameterised over.
struct AlgoAtWorld {
  const AlgoEntry* entry;
  int world;
};
// Only the algorithms named `algo` when it is not empty (e.g. every op's "shm").
inline std::vector<AlgoAtWorld> host_algorithms_at(std::initializer_list<int> worlds, std::string_view algo = {}) {
  std::vector<AlgoAtWorld> out;
  for (const AlgoEntry& e : Registry::get().all())
    if (e.backend == "any" && (algo.empty() || e.algo == algo))
      for (int n : worlds) out.push_back({&e, n});
  return out;
}
// GoogleTest parameter names: "allreduce_ring_n4".
inline std::string algo_at_world_name(const ::testing::TestParamInfo<AlgoAtWorld>& i) {
  return std::string(op_name(i.param.entry->op)) + "_" + i.param.entry->algo + "_n" + std::to_string(i.param.world);
}

// Built with AddressSanitizer (the ASan+UBSan unit suite of scripts/ci-extra.sh, ~3x slower;
// COLLBENCH_SANITIZE=ON defines COLLBENCH_SANITIZER_BUILD: clang has no __SANITIZE_ADDRESS__),
// the widest cross products keep one dtype of each width and two redops: memory errors follow
// the element width and the code path (a plain reduce; avg's scale pass and scratch copy), not
// the op's value. The plain build checks every dtype and redop.
#if defined(COLLBENCH_SANITIZER_BUILD) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
inline std::vector<DType> dtypes_to_check() {
  if (kSanitizerBuild) return {DType::int8, DType::float16, DType::float32, DType::float64};
  return {kAllDTypes.begin(), kAllDTypes.end()};
}
inline std::vector<RedOp> redops_to_check() {
  if (kSanitizerBuild) return {RedOp::sum, RedOp::avg};
  return {std::begin(kAllRedOps), std::end(kAllRedOps)};
}

struct CaseSpace {
  std::vector<std::size_t> counts;
  std::vector<DType> dtypes;
  std::vector<RedOp> redops;
  bool both_roots = true;  // root 0 and root n-1 for rooted ops
  bool both_placements = true;  // in-place and out-of-place
};

// Counts {0, 1, n-1, 1000, uneven}: n-1 leaves some ranks' chunks empty, uneven ones differ
// by one element between ranks.
inline std::vector<std::size_t> small_counts(int n) {
  std::vector<std::size_t> c = {0, 1, 1000, static_cast<std::size_t>(7 * n + 3)};
  if (n > 2) c.push_back(static_cast<std::size_t>(n - 1));
  return c;
}

// The zero-copy algorithms on registered buffers (host and device): the small counts, one past
// the small-message path (the sliced one), three dtypes of different widths, every redop.
inline CaseSpace registered_case_space(int n) {
  CaseSpace cs;
  cs.counts = small_counts(n);
  cs.counts.push_back(40000);
  cs.dtypes = {DType::float32, DType::int8, DType::float64};
  cs.redops = {RedOp::sum, RedOp::max, RedOp::prod, RedOp::min};
  return cs;
}

inline std::vector<verify::Case> expand(Op op, int world, int rank, const CaseSpace& s) {
  std::vector<verify::Case> out;
  std::vector<int> roots = {0};
  if (op_has_root(op) && s.both_roots && world > 1) roots.push_back(world - 1);
  std::vector<RedOp> redops = op_reduces(op) ? s.redops : std::vector<RedOp>{RedOp::sum};
  std::vector<bool> placements = {false};
  if (s.both_placements) placements.push_back(true);
  for (std::size_t count : s.counts)
    for (DType t : s.dtypes)
      for (RedOp r : redops)
        for (int root : roots)
          for (bool ip : placements) out.push_back({op, t, r, count, root, rank, world, ip});
  return out;
}

inline std::string describe(const verify::Case& c) {
  return std::string(op_name(c.op)) + " n=" + std::to_string(c.world) + " count=" + std::to_string(c.count) + " " +
         std::string(dtype_name(c.dtype)) + (op_reduces(c.op) ? " " + std::string(redop_name(c.redop)) : "") +
         " root=" + std::to_string(c.root) + (c.in_place ? " in-place" : " out-of-place");
}

// `entry` on every case, one after another (verify::run_checked; in `buffers` when given, e.g.
// registered peer memory): a failure names the first case that was skipped or wrong, and where.
inline ::testing::AssertionResult exact_on_every_case(Transport& t, const AlgoEntry& entry,
                                                      const std::vector<verify::Case>& cases,
                                                      MemorySpace* buffers = nullptr) {
  for (const verify::Case& c : cases) {
    const verify::Outcome o = verify::run_checked(t, entry, c, 0, nullptr, buffers);
    if (o.skipped) return ::testing::AssertionFailure() << describe(c) << ": " << o.skip_reason;
    if (o.check.wrong)
      return ::testing::AssertionFailure() << describe(c) << ": " << o.check.wrong << " wrong, first at "
                                           << o.check.first_index << " expected " << o.check.expected << " got "
                                           << o.check.got;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace collbench::testing
