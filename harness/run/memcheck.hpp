#pragma once
// "Will this point fit?" before allocating, so a too-large sweep fails with a message naming
// the sizes instead of an OOM kill mid-run; and the peak memory a run really used.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/collective.hpp"
#include "harness/plan/plan.hpp"

namespace collbench {

// MemAvailable from /proc/meminfo, else free pages from sysconf; 0 when unknown.
std::uint64_t available_host_memory();

// Peak resident bytes of this process so far (VmHWM of /proc/self/status); 0 when unknown.
std::uint64_t peak_resident_bytes();

// What one rank holds at the peak of a point, in bytes. The point's send and recv buffers are
// allocated once and reused by the checking run (expected values are computed on the fly);
// beside them runs either an algorithm with its scratch or the MPI library's own collective
// with what it allocates internally (measured: memcheck.cpp).
struct PointMemory {
  std::uint64_t buffers = 0;  // send + recv
  std::uint64_t extra = 0;    // max(algorithm scratch allowance, MPI internal) + fixed overheads
  std::uint64_t total() const { return buffers + extra; }
};
// `bytes` is the point's size as reported (nccl-tests' size).
PointMemory point_memory_need(Op op, std::uint64_t chunk_count, DType dtype, int world_size);

// A message when `ranks_on_node` ranks needing `need` each do not fit in `available`
// (unknown availability passes).
std::optional<std::string> memory_shortfall(std::uint64_t need, int ranks_on_node, std::uint64_t available);

// The first collective block whose largest point does not fit (`ranks_on_node` ranks in
// `available` bytes), as a usage message; pingpong holds at most 64 MiB of window per rank.
std::optional<std::string> plan_memory_problem(const std::vector<Block>& plan, int world_size, int ranks_on_node,
                                               std::uint64_t available);

}  // namespace collbench
