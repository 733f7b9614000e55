// gpu.hpp with the CUDA runtime.
#include <cuda_runtime_api.h>

#include "collectives/gpu/cuda_check.hpp"
#include "collectives/gpu/cuda_memory.hpp"
#include "collectives/gpu/gpu.hpp"
#include "collectives/gpu/staging_transport.hpp"

namespace collbench::gpu {
namespace {

std::string version_string(int v) {  // CUDA encodes 13.0 as 13000
  return v > 0 ? std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10) : std::string();
}

}  // namespace

bool built_with_cuda() { return true; }

int device_count(std::string* why_none) {
  int n = 0;  // left untouched on error (e.g. 35, no driver)
  const cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess) {
    cudaGetLastError();  // reset the last-error state so later checks start clean
    if (why_none) *why_none = std::string("no CUDA device: ") + cudaGetErrorString(rc);
    return 0;
  }
  if (n == 0 && why_none) *why_none = "no CUDA device: cudaGetDeviceCount found none";
  return n;
}

int select_device(int local_rank, int local_size) {
  std::string why;
  const int n = device_count(&why);
  const int dev = choose_device(local_rank, local_size, n, why);
  COLLBENCH_CUDA_CHECK(cudaSetDevice(dev));
  return dev;
}

std::string device_uuid(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  // nvidia-smi's form: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    const auto b = static_cast<unsigned char>(prop.uuid.bytes[i]);
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

DeviceMemoryInfo device_memory_info(int device) {
  DeviceMemoryInfo info;
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess || cudaSetDevice(device) != cudaSuccess) {
    cudaGetLastError();
    return info;
  }
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) == cudaSuccess) info = {free, total};
  cudaGetLastError();
  cudaSetDevice(current);
  return info;
}

std::unique_ptr<MemorySpace> make_cuda_memory(int device) { return std::make_unique<CudaMemory>(device); }

std::unique_ptr<Transport> make_staging_transport(Transport& host_inner, MemorySpace& device_mem) {
  return std::make_unique<StagingTransport>(host_inner, device_mem, std::make_unique<PinnedHostMemory>(),
                                            device_ipc(device_mem));
}

Versions versions(int device) {
  Versions v;
  int x = 0;
  if (cudaRuntimeGetVersion(&x) == cudaSuccess) v.runtime = version_string(x);
  x = 0;
  if (cudaDriverGetVersion(&x) == cudaSuccess) v.driver = version_string(x);  // 0 without a driver
  cudaDeviceProp prop{};
  if (device >= 0 && device < device_count() && cudaGetDeviceProperties(&prop, device) == cudaSuccess)
    v.device_name = prop.name;
  cudaGetLastError();
  return v;
}

}  // namespace collbench::gpu
