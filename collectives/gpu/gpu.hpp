#pragma once
// The device path, independent of any backend: whether this build has CUDA, which GPU a rank
// uses, and factories for device memory and the device transports other transports are
// wrapped in. Compiled in every build; without CUDA every factory throws
// Error("collbench was built without CUDA"). The backends build on it (backends/device.hpp).
//
// Typical use (one rank of `collbench --device cuda`):
//   std::string why;
//   if (gpu::device_count(&why) == 0) -> skip/usage error with `why`
//   int dev = gpu::select_device(local_rank, local_size);    // the rank's index on its node
//   gpu::device_sharing(<every local rank's gpu::device_uuid(dev)>) -> NCCL refuses sharing
//   auto mem = gpu::make_cuda_memory(dev);                    // outlives every transport using it
//   --backend nccl:  auto t = nccl::make_transport(world, *mem);         (backends/nccl)
//   --backend mpi:   auto t = mpi::make_device_transport(mpi, *mem);     (backends/mpi: staged or CUDA-aware)
// Every timed iteration ends with t.memory().synchronize() (device work is asynchronous).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/core/memory.hpp"
#include "collectives/transport/device_peer_memory.hpp"
#include "collectives/transport/transport.hpp"

namespace collbench::gpu {

bool built_with_cuda();

// Visible CUDA devices; 0 with the reason in *why_none (may be null) when there is no
// driver, no device, or no CUDA in this build: "no CUDA device: <cudaGetDeviceCount error>".
int device_count(std::string* why_none = nullptr);

// The GPU of a node-local rank: local_rank % (visible devices), made the current device.
// Fewer devices than ranks means ranks share GPUs (allowed for --backend mpi; NCCL refuses
// it: see device_sharing). Under Slurm's one-GPU-per-task binding every rank sees one device,
// device 0, which is its own GPU. Throws Error when no device is visible.
int select_device(int local_rank, int local_size);

// The pure part of select_device (tested without a GPU): the device for local_rank given
// `devices` visible ones, or an Error that says what is missing (`why_none` when 0).
int choose_device(int local_rank, int local_size, int devices, const std::string& why_none);

// The physical identity of a device ("GPU-8c1b…", as nvidia-smi -L prints it): the same in
// every process whatever CUDA_VISIBLE_DEVICES renumbers; empty where unknown (stub build).
std::string device_uuid(int device);

// How the node-local ranks map onto physical GPUs, from each local rank's device uuid.
struct DeviceSharing {
  int ranks_per_device = 1;     // most local ranks on one GPU (1: every rank has its own)
  int first = -1, second = -1;  // the first two local ranks found on one GPU (-1: none)
  std::string uuid;             // that GPU
};
DeviceSharing device_sharing(const std::vector<std::string>& uuid_of_local_rank);

// NCCL refuses two ranks on one GPU: the one-line reason for --backend nccl, or "" when
// every rank has its own device.
std::string nccl_sharing_error(const DeviceSharing& s, const std::string& host);

// Free and total bytes of the current device's memory (cudaMemGetInfo); {0, 0} where unknown.
struct DeviceMemoryInfo {
  std::uint64_t free = 0, total = 0;
};
DeviceMemoryInfo device_memory_info(int device);

// Device memory on `device` with its own stream: cudaMalloc, async copies and reduce
// kernels on the stream, upload/download/synchronize wait for it.
std::unique_ptr<MemorySpace> make_cuda_memory(int device);

// Device buffers over a host-only transport (MPI that is not CUDA-aware, as Debian's):
// every message is staged through reused pinned host buffers; peer memory through CUDA IPC.
// `host_inner` and `device_mem` must outlive the result.
std::unique_ptr<Transport> make_staging_transport(Transport& host_inner, MemorySpace& device_mem);

// How `device_mem` (from make_cuda_memory) shares its blocks with the node's other ranks:
// CUDA IPC, the device peer memory behind the zero-copy (shm) algorithms on device buffers.
std::shared_ptr<DeviceIpc> device_ipc(MemorySpace& device_mem);

// For the run record; empty strings where unknown (no driver, stub build).
struct Versions {
  std::string device_name;
  std::string driver;   // "13.0"
  std::string runtime;  // "13.0"
};
Versions versions(int device);

}  // namespace collbench::gpu
