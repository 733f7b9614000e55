#include "collectives/backends/device.hpp"

#include <array>
#include <cstring>
#include <vector>

#include "collectives/gpu/gpu.hpp"

namespace collbench {

std::string cuda_unavailable() {
  if (!gpu::built_with_cuda()) return "--device cuda: collbench was built without CUDA; accepted: --device cpu";
  std::string why;
  if (gpu::device_count(&why) == 0) return "--device cuda: " + why + "; accepted: --device cpu";
  return {};
}

std::string agree_message(World& world, const std::string& mine) {
  std::int64_t first = mine.empty() ? world.size() : world.rank();
  world.allreduce(std::span<std::int64_t>(&first, 1), World::Reduce::min);
  if (first == world.size()) return {};
  std::array<char, 1024> buf{};
  if (world.rank() == first) mine.copy(buf.data(), buf.size() - 1);
  world.broadcast(std::as_writable_bytes(std::span<char>(buf)), static_cast<int>(first));
  return buf.data();
}

DeviceSide::DeviceSide(const BackendContext& ctx, bool exclusive) {
  device_ = gpu::select_device(ctx.local_rank, ctx.local_size);
  // Which physical GPU every rank got (fixed-size records: one allgather), then this node's:
  // shared (fewer GPUs than ranks) or each its own (one GPU per rank, or Slurm's per-task
  // binding where every rank sees "device 0").
  constexpr std::size_t kLen = 48;
  std::array<char, kLen> me{};
  gpu::device_uuid(device_).copy(me.data(), kLen - 1);
  std::vector<char> all(kLen * static_cast<std::size_t>(ctx.world.size()));
  ctx.world.allgather(std::as_bytes(std::span<const char>(me)), std::as_writable_bytes(std::span<char>(all)));
  std::vector<std::string> local;
  const int my_node = ctx.node_of_rank.at(static_cast<std::size_t>(ctx.world.rank()));
  for (int r = 0; r < ctx.world.size(); ++r)
    if (ctx.node_of_rank.at(static_cast<std::size_t>(r)) == my_node)
      local.emplace_back(all.data() + static_cast<std::size_t>(r) * kLen);
  const gpu::DeviceSharing sharing = gpu::device_sharing(local);
  // The run record's figure: the most ranks on one GPU on any node.
  std::int64_t most = sharing.ranks_per_device;
  ctx.world.allreduce(std::span<std::int64_t>(&most, 1), World::Reduce::max);
  ranks_per_device_ = static_cast<int>(most);
  if (exclusive) {
    // Only the nodes with shared GPUs see the problem: agree, so that every rank refuses with
    // the first such node's line (UsageError: exit 2, one line from rank 0).
    if (auto why = agree_message(ctx.world, gpu::nccl_sharing_error(sharing, ctx.host)); !why.empty()) throw UsageError(why);
  }
  memory_ = gpu::make_cuda_memory(device_);
}

DeviceSide::~DeviceSide() = default;

void DeviceSide::describe(Facts& f) const {
  const gpu::Versions g = gpu::versions(device_);
  auto set = [&f](const char* key, const std::string& s) {
    if (!s.empty()) f.emplace_back(key, s);
  };
  set("gpu", g.device_name);
  set("cuda", g.runtime);
  set("cuda_driver", g.driver);
  f.emplace_back("ranks_per_gpu", static_cast<std::int64_t>(ranks_per_device_));
}

Backend::DeviceBudget DeviceSide::budget(bool staged) const {
  return {gpu::device_memory_info(device_).free, ranks_per_device_, staged};
}

}  // namespace collbench
