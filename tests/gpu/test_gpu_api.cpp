// gpu.hpp without a GPU: device choice, the no-device reason, and what a build without CUDA
// says. Runs in every build; the expectations follow how this build was configured.
#include <gtest/gtest.h>

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_CUDA_AWARE_SUPPORT
#endif

#include "collectives/backends/mpi/mpi_device.hpp"
#include "collectives/backends/nccl/nccl_backend.hpp"
#include "collectives/gpu/gpu.hpp"

namespace collbench {
namespace {

TEST(GpuApi, BuildFlagsMatchConfiguration) {
  EXPECT_EQ(gpu::built_with_cuda(), COLLBENCH_EXPECT_CUDA != 0);
  EXPECT_EQ(nccl::built(), COLLBENCH_EXPECT_NCCL != 0);
}

TEST(GpuApi, ChooseDeviceOnePerLocalRank) {
  EXPECT_EQ(gpu::choose_device(0, 4, 4, ""), 0);
  EXPECT_EQ(gpu::choose_device(3, 4, 8, ""), 3);
}

// A one-GPU machine runs several ranks over --backend mpi: ranks share devices round robin;
// Slurm's one-GPU-per-task binding (every rank sees one device) is accepted the same way.
TEST(GpuApi, FewerDevicesThanRanksShareRoundRobin) {
  EXPECT_EQ(gpu::choose_device(1, 4, 2, ""), 1);
  EXPECT_EQ(gpu::choose_device(2, 4, 2, ""), 0);
  EXPECT_EQ(gpu::choose_device(3, 4, 1, ""), 0);
  try {
    gpu::choose_device(0, 1, 0, "no CUDA device: CUDA driver version is insufficient for CUDA runtime version");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("insufficient"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gpu::choose_device(2, 2, 8, ""), Error);  // rank outside the node
}

TEST(GpuApi, DeviceSharingFromUuids) {
  const gpu::DeviceSharing own = gpu::device_sharing({"GPU-a", "GPU-b", "GPU-c"});  // Slurm binding or 3 GPUs
  EXPECT_EQ(own.ranks_per_device, 1);
  EXPECT_EQ(own.first, -1);
  EXPECT_EQ(gpu::nccl_sharing_error(own, "n1"), "");
  const gpu::DeviceSharing shared = gpu::device_sharing({"GPU-a", "GPU-b", "GPU-a", "GPU-a"});
  EXPECT_EQ(shared.ranks_per_device, 3);
  EXPECT_EQ(shared.first, 0);
  EXPECT_EQ(shared.second, 2);
  EXPECT_EQ(shared.uuid, "GPU-a");
  const std::string why = gpu::nccl_sharing_error(shared, "n1");
  EXPECT_NE(why.find("node-local ranks 0 and 2 on n1 both use GPU GPU-a"), std::string::npos) << why;
  EXPECT_NE(why.find("accepted: --backend mpi"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << "one line";
  EXPECT_EQ(gpu::device_sharing({}).ranks_per_device, 1);
}

TEST(GpuApi, DeviceInfoWithoutDeviceIsEmpty) {
  if (gpu::device_count() > 0) GTEST_SKIP() << "a device is present";
  EXPECT_EQ(gpu::device_uuid(0), "");
  EXPECT_EQ(gpu::device_memory_info(0).total, 0u);
}

TEST(GpuApi, NoDeviceGivesAReason) {
  std::string why;
  const int n = gpu::device_count(&why);
  if (n > 0) GTEST_SKIP() << n << " CUDA device(s) present";
  if (gpu::built_with_cuda()) {
    EXPECT_EQ(why.rfind("no CUDA device: ", 0), 0u) << why;
  } else {
    EXPECT_EQ(why, "collbench was built without CUDA");
  }
  EXPECT_THROW(gpu::select_device(0, 1), Error);
  try {
    gpu::select_device(0, 1);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(GpuApi, VersionsNeverThrow) {
  const gpu::Versions v = gpu::versions(0);
  if (gpu::built_with_cuda()) {
    EXPECT_FALSE(v.runtime.empty());
  } else {
    EXPECT_TRUE(v.runtime.empty() && v.device_name.empty());
  }
  if (nccl::built()) {
    EXPECT_EQ(nccl::version().rfind("2.", 0), 0u) << nccl::version();
  } else {
    EXPECT_TRUE(nccl::version().empty());
  }
}

TEST(GpuApi, StubFactoriesSaySo) {
  if (gpu::built_with_cuda()) GTEST_SKIP() << "CUDA build";
  HostMemory host;
  for (auto f : {+[](MemorySpace&) { gpu::make_cuda_memory(0); }}) {
    try {
      f(host);
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "collbench was built without CUDA");
    }
  }
}

TEST(GpuApi, CudaMemoryWithoutDeviceIsATypedError) {
  if (!gpu::built_with_cuda()) GTEST_SKIP() << "stub build";
  if (gpu::device_count() > 0) GTEST_SKIP() << "a device is present";
  EXPECT_THROW(gpu::make_cuda_memory(0), TransportError);
}

TEST(GpuApi, CudaAwareQueryFollowsTheMpiBuild) {
  // What the MPI's own header says it was built with (Open MPI's mpi-ext.h): without CUDA
  // support (Debian's Open MPI) the answer must be false, so device buffers are staged through
  // host memory; with it, the runtime's answer (MPIX_Query_cuda_support, callable before
  // MPI_Init), which may be off.
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  EXPECT_EQ(mpi::is_cuda_aware(), MPIX_Query_cuda_support() == 1);
#else
  EXPECT_FALSE(mpi::is_cuda_aware()) << "this MPI's headers declare no CUDA support";
#endif
}

}  // namespace
}  // namespace collbench
