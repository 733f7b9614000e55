#pragma once
// "Will this point fit?" before allocating, so a too-large sweep fails with a message naming
// the sizes instead of an OOM kill mid-run.
#include <cstdint>
#include <optional>
#include <string>

#include "collectives/collective.hpp"

namespace collbench {

// MemAvailable from /proc/meminfo, else free pages from sysconf; 0 when unknown.
std::uint64_t available_host_memory();

// Peak bytes one rank needs for a point: the send+recv buffers ×4 (the timing buffers, the
// verification's host and device copies, and room for algorithm scratch of the same size).
std::uint64_t point_memory_need(Op op, std::uint64_t chunk_count, DType dtype, int world_size);

// A message when `ranks_on_node` ranks needing `need` each do not fit in `available`
// (unknown availability passes).
std::optional<std::string> memory_shortfall(std::uint64_t need, int ranks_on_node, std::uint64_t available);

}  // namespace collbench
