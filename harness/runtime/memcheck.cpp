#include "harness/runtime/memcheck.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <sstream>

#include "collectives/verify/pattern.hpp"
#include "harness/plan/sizes.hpp"
#include "harness/runtime/cache_pool.hpp"

namespace collbench {
namespace {

// Peak memory Open MPI 4.1's own collective allocates beyond the caller's buffers, as a
// fraction of the message (nccl-tests' size), in eighths. Measured with a C program doing one
// MPI_<op> of a 256 MiB int8 message under `mpirun -np 2` and `-np 4` (vader + CMA), taking
// VmHWM after the call minus VmHWM with both buffers already touched, max over ranks and over
// in-place/out-of-place: Allreduce 0.5× (its ring's two block buffers; in place too),
// Reduce 1× at np 4 (0 at np 2), Reduce_scatter_block 1× at np 2 and 2× at np 4 (a whole
// reduced copy plus a temporary), Alltoall 0.5× in place (0 out of place), Bcast, Gather,
// Allgather and Scatter 0.
std::uint64_t mpi_internal_bytes(Op op, std::uint64_t message_bytes) {
  std::uint64_t eighths = 0;
  switch (op) {
    case Op::allreduce: eighths = 4; break;
    case Op::reduce: eighths = 8; break;
    case Op::reduce_scatter: eighths = 16; break;
    case Op::alltoall: eighths = 4; break;
    default: break;
  }
  return message_bytes / 8 * eighths;
}

// What every point holds whatever its size: the staging chunks of filling/checking device
// memory, and headroom for the workspace's segment-sized scratch of pipelined algorithms.
constexpr std::uint64_t kFixedExtraBytes = 64ull << 20;

// On the GPU beside a point's buffers: NCCL's per-call state and the allocator's rounding
// (cudaMalloc rounds to 2 MiB pages); the context and the communicator's own buffers are
// already gone from cudaMemGetInfo's free bytes when the point is checked.
constexpr std::uint64_t kFixedDeviceBytes = 32ull << 20;

std::string whole_mib(std::uint64_t b) { return std::to_string(b >> 20) + " MiB"; }

}  // namespace

std::uint64_t available_host_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

std::uint64_t peak_resident_bytes() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // "VmHWM:  1234 kB"
  return 0;
}

std::uint64_t buffer_copies(const Settings& s, std::size_t algos) {
  return s.interleave && !s.cache_cold && algos > 1 ? algos : 1;
}

PointMemory point_memory_need(Op op, std::uint64_t chunk_count, DType dtype, int world_size, std::uint64_t cold_pool,
                              std::uint64_t copies) {
  const std::uint64_t es = dtype_size(dtype);
  const std::uint64_t send = es * send_elems(op, chunk_count, world_size);
  const std::uint64_t recv = es * recv_elems(op, chunk_count, world_size);
  const std::uint64_t largest = std::max(send, recv);
  // An algorithm's scratch is allowed up to one largest buffer (the 3x of nccl-tests' send,
  // recv and expected, with no expected array here); the MPI library may need more.
  const std::uint64_t message = es * chunk_count * static_cast<std::uint64_t>(size_chunks(op, world_size));
  const std::uint64_t buffers = cold_pool ? cold_pool_layout(send, recv, cold_pool).bytes() : copies * (send + recv);
  return {buffers, std::max(largest, mpi_internal_bytes(op, message)) + kFixedExtraBytes};
}

DevicePointMemory device_point_memory_need(Op op, std::uint64_t chunk_count, DType dtype, int world_size, bool staged,
                                           std::uint64_t copies) {
  const std::uint64_t es = dtype_size(dtype);
  const std::uint64_t send = es * send_elems(op, chunk_count, world_size);
  const std::uint64_t recv = es * recv_elems(op, chunk_count, world_size);
  const std::uint64_t largest = std::max(send, recv);
  DevicePointMemory m;
  m.device = copies * (send + recv) + largest + kFixedDeviceBytes;
  m.host = std::min<std::uint64_t>(largest, verify::kStagingBytes) + kFixedExtraBytes;
  if (staged && largest) m.host += 2 * std::bit_ceil(std::max<std::uint64_t>(largest, 4096));
  return m;
}

std::optional<std::string> device_memory_shortfall(std::uint64_t need, int ranks_per_device, std::uint64_t free) {
  const unsigned __int128 total = static_cast<unsigned __int128>(need) * static_cast<unsigned>(ranks_per_device);
  if (free == 0 || total <= free) return std::nullopt;
  return "not enough device memory: " + std::to_string(ranks_per_device) + " rank(s) on one GPU need " +
         whole_mib(need) + " each (" + whole_mib(static_cast<std::uint64_t>(total)) + ") but the GPU has " +
         whole_mib(free) + " free";
}

std::optional<std::string> memory_shortfall(std::uint64_t need, int ranks_on_node, std::uint64_t available) {
  const unsigned __int128 total = static_cast<unsigned __int128>(need) * static_cast<unsigned>(ranks_on_node);
  if (available == 0 || total <= available) return std::nullopt;
  std::ostringstream m;
  m << "not enough memory: " << ranks_on_node << " ranks on a node need " << need / (1 << 20) << " MiB each ("
    << static_cast<std::uint64_t>(total >> 20) << " MiB) but the node has " << available / (1 << 20)
    << " MiB available";
  return m.str();
}

std::optional<std::string> plan_memory_problem(const std::vector<Block>& plan, int world_size, int ranks_on_node,
                                               std::uint64_t available, bool device, std::uint64_t llc_bytes) {
  for (const auto& block : plan) {
    if (const auto* d = std::get_if<DdpBlock>(&block)) {
      if (auto why = memory_shortfall(ddp_memory_need(*d, world_size), ranks_on_node, available))
        return "--workload ddp --model " + d->model.name + " (" + std::to_string(d->grad_bytes()) +
               " B of gradients, held twice: gradients and buckets): " + *why +
               "; accepted: a smaller model, --grad-dtype bfloat16, or fewer ranks per node";
      continue;
    }
    const auto* b = std::get_if<CollectiveBlock>(&block);
    if (!b) continue;
    const auto sizes = block_sizes(block, world_size);
    if (sizes.empty()) continue;
    const SizePoint& big = sizes.back();
    const auto need = device ? device_point_memory_need(b->op, big.chunk_count, b->dtype, world_size, true).host
                             : point_memory_need(b->op, big.chunk_count, b->dtype, world_size,
                                                 b->settings.cache_cold ? cold_pool_target(b->settings, llc_bytes) : 0,
                                                 buffer_copies(b->settings, b->algos.size()))
                                   .total();
    if (auto why = memory_shortfall(need, ranks_on_node, available))
      return std::string(op_name(b->op)) + " at " + std::to_string(big.bytes) + " B" +
             (b->settings.cache_cold ? " (--cache cold: a pool of " + whole_mib(need) + " with its overheads)" : "") +
             ": " + *why + "; accepted: a smaller --max-bytes" + (b->settings.cache_cold ? " or --cache-pool" : "") +
             (buffer_copies(b->settings, b->algos.size()) > 1 ? ", fewer algorithms with --interleave (each has its own buffers)" : "") +
             ", or fewer ranks per node";
  }
  return std::nullopt;
}

namespace {
constexpr std::uint64_t kDdpAlign = 256;  // a bucket's offset alignment, like a device allocation
}  // namespace

DdpLayout ddp_layout(const DdpBlock& b) {
  DdpLayout l;
  for (const auto& k : b.buckets) {
    l.offsets.push_back(l.total);
    l.total += (k.bytes + kDdpAlign - 1) / kDdpAlign * kDdpAlign;
  }
  return l;
}

std::uint64_t ddp_memory_need(const DdpBlock& b, int world_size) {
  std::uint64_t extra = 0, largest = 0;
  for (const auto& k : b.buckets) {
    extra = std::max(extra, point_memory_need(Op::allreduce, k.count, k.dtype, world_size).extra);
    largest = std::max(largest, k.bytes);
  }
  // avg scales each bucket's gradients into a scratch copy first (run_entry).
  return 2 * ddp_layout(b).total + extra + (b.redop == RedOp::avg ? largest : 0);
}

}  // namespace collbench
