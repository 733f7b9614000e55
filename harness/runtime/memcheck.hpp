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
// `bytes` is the point's size as reported (nccl-tests' size). `cold_pool`: --cache cold's pool
// target (cache_pool.hpp), whose sets then replace the one send + recv in `buffers`; 0 = hot.
// `copies`: how many send + recv sets the point holds (buffer_copies()).
PointMemory point_memory_need(Op op, std::uint64_t chunk_count, DType dtype, int world_size,
                              std::uint64_t cold_pool = 0, std::uint64_t copies = 1);

// The send + recv sets a point of `algos` algorithms holds: with --interleave and a hot cache,
// one per algorithm, so each call finds the buffers as its own algorithm's previous call left
// them (harness/measure/collective_point.cpp); otherwise one, shared.
std::uint64_t buffer_copies(const Settings& s, std::size_t algos);

// --device cuda: what one rank holds on its GPU at the peak of a point (send + recv + the
// algorithm's scratch allowance of one largest buffer + a fixed allowance for the CUDA
// context's and NCCL's per-call state), and on the host beside it: the verification chunks
// (filled and checked kStagingBytes at a time) and, when MPI moves device buffers through
// pinned host memory (`staged`), the staging pool — one send and one receive of the largest
// buffer in flight, each rounded up to a power of two as the pool allocates.
struct DevicePointMemory {
  std::uint64_t device = 0;
  std::uint64_t host = 0;
};
DevicePointMemory device_point_memory_need(Op op, std::uint64_t chunk_count, DType dtype, int world_size, bool staged,
                                           std::uint64_t copies = 1);

// A message when `ranks_per_device` ranks sharing one GPU, needing `need` each, do not fit in
// its `free` bytes (cudaMemGetInfo; 0 = unknown passes).
std::optional<std::string> device_memory_shortfall(std::uint64_t need, int ranks_per_device, std::uint64_t free);

// A message when `ranks_on_node` ranks needing `need` each do not fit in `available`
// (unknown availability passes).
std::optional<std::string> memory_shortfall(std::uint64_t need, int ranks_on_node, std::uint64_t available);

// The first collective block whose largest point does not fit (`ranks_on_node` ranks in
// `available` bytes of host memory), as a usage message; pingpong holds at most 64 MiB of
// window per rank. Device runs (`device`) hold their buffers on the GPU (checked per point,
// skipping what does not fit there); the host then holds staging and verification chunks only.
// `llc_bytes` sizes --cache cold's pools (cache_pool.hpp).
std::optional<std::string> plan_memory_problem(const std::vector<Block>& plan, int world_size, int ranks_on_node,
                                               std::uint64_t available, bool device, std::uint64_t llc_bytes = 0);

// What one rank holds for the block: the gradients and the buckets (twice the gradient bytes:
// what DDP holds too, unless gradient_as_bucket_view), plus the largest bucket's allowance
// for algorithm scratch and library temporaries, and for avg its scaled copy.
std::uint64_t ddp_memory_need(const DdpBlock& block, int world_size);

// Each bucket's byte offset in the step's send and recv buffers (256-byte aligned, like a
// device allocation), and the total.
struct DdpLayout {
  std::vector<std::uint64_t> offsets;
  std::uint64_t total = 0;
};
DdpLayout ddp_layout(const DdpBlock& block);

}  // namespace collbench
