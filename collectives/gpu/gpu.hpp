#pragma once
// The device path as the harness sees it: which backends this build has, which GPU a rank
// uses, and factories for device memory and device-capable transports. Compiled in every
// build; without CUDA every factory throws Error("collbench was built without CUDA").
//
// Typical use (one rank of `collbench --device cuda`):
//   std::string why;
//   if (gpu::device_count(&why) == 0) -> skip/usage error with `why`
//   int dev = gpu::select_device(local_rank, local_size);    // node-local rank from MPI_COMM_TYPE_SHARED
//   gpu::device_sharing(<every local rank's gpu::device_uuid(dev)>) -> NCCL refuses sharing
//   auto mem = gpu::make_cuda_memory(dev);                    // outlives every transport using it
//   --backend nccl:  auto t = gpu::make_nccl_transport(MPI_COMM_WORLD, *mem);
//   --backend mpi:   MpiTransport mpi(MPI_COMM_WORLD);                   // outlives t
//                    auto t = gpu::make_mpi_device_transport(mpi, *mem);  // staged or CUDA-aware
// Every timed iteration ends with t.memory().synchronize() (device work is asynchronous).
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/core/memory.hpp"
#include "collectives/transport/device_peer_memory.hpp"
#include "collectives/transport/mpi/mpi_transport.hpp"
#include "collectives/transport/transport.hpp"

namespace collbench::gpu {

bool built_with_cuda();
bool built_with_nccl();

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

// NCCL point-to-point on `cuda_mem`'s stream (see transport/nccl/nccl_transport.hpp for the
// matching rules). Collective over `comm`: every rank calls it. `cuda_mem` must come from
// make_cuda_memory and outlive the transport; `comm` is used only during the call.
// `scope`: the call scope its calls run under (the harness's, watched; a fresh one if null).
std::unique_ptr<Transport> make_nccl_transport(MPI_Comm comm, MemorySpace& cuda_mem,
                                               std::shared_ptr<CallScope> scope = nullptr);

// Device buffers over a host-only transport (MPI that is not CUDA-aware, as Debian's):
// every message is staged through reused pinned host buffers; peer memory through CUDA IPC.
// `host_inner` and `device_mem` must outlive the result.
std::unique_ptr<Transport> make_staging_transport(Transport& host_inner, MemorySpace& device_mem);

// --backend mpi on device memory: when mpi_is_cuda_aware(), `mpi` itself moves the device
// buffers (set_memory(device_mem)) behind a stream synchronisation before each send and receive;
// otherwise the staging transport. Either way, with ranks on one node, CUDA IPC peer memory.
// `mpi` and `device_mem` must outlive the result.
std::unique_ptr<Transport> make_mpi_device_transport(MpiTransport& mpi, MemorySpace& device_mem);

// How `device_mem` (from make_cuda_memory) shares its blocks with the node's other ranks:
// CUDA IPC, the device peer memory behind the zero-copy (shm) algorithms on device buffers.
std::shared_ptr<DeviceIpc> device_ipc(MemorySpace& device_mem);

// True when the MPI library says it can move device buffers itself (MPIX_Query_cuda_support);
// false when it cannot or cannot say.
bool mpi_is_cuda_aware();

// For the run record; empty strings where unknown (no driver, no NCCL, stub build).
struct Versions {
  std::string device_name;
  std::string driver;   // "13.0"
  std::string runtime;  // "13.0"
  std::string nccl;     // "2.28.9"
};
Versions versions(int device);

}  // namespace collbench::gpu
