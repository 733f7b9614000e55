// gpu.hpp without a GPU: device choice, the no-device reason, and what a build without CUDA
// says. Runs in every build; the expectations follow how this build was configured.
#include <gtest/gtest.h>

#include "collectives/gpu/gpu.hpp"

namespace collbench {
namespace {

TEST(GpuApi, BuildFlagsMatchConfiguration) {
  EXPECT_EQ(gpu::built_with_cuda(), COLLBENCH_EXPECT_CUDA != 0);
  EXPECT_EQ(gpu::built_with_nccl(), COLLBENCH_EXPECT_NCCL != 0);
}

TEST(GpuApi, ChooseDeviceOnePerLocalRank) {
  EXPECT_EQ(gpu::choose_device(0, 4, 4, ""), 0);
  EXPECT_EQ(gpu::choose_device(3, 4, 8, ""), 3);
}

TEST(GpuApi, TooFewDevicesIsAClearError) {
  try {
    gpu::choose_device(1, 4, 2, "");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("4 ranks share this node but only 2 CUDA device(s)"), std::string::npos) << what;
  }
  try {
    gpu::choose_device(0, 1, 0, "no CUDA device: CUDA driver version is insufficient for CUDA runtime version");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("insufficient"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gpu::choose_device(2, 2, 8, ""), Error);  // rank outside the node
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
    EXPECT_TRUE(v.runtime.empty() && v.nccl.empty() && v.device_name.empty());
  }
  if (gpu::built_with_nccl()) {
    EXPECT_EQ(v.nccl.rfind("2.", 0), 0u) << v.nccl;
  }
}

TEST(GpuApi, StubFactoriesSaySo) {
  if (gpu::built_with_cuda()) GTEST_SKIP() << "CUDA build";
  HostMemory host;
  for (auto f : {+[](MemorySpace&) { gpu::make_cuda_memory(0); },
                 +[](MemorySpace& m) { gpu::make_nccl_transport(MPI_COMM_NULL, m); }}) {
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

TEST(GpuApi, CudaAwareQueryAnswers) {
  // Debian's Open MPI is built without CUDA: false there. Only checks that it answers.
  (void)gpu::mpi_is_cuda_aware();
}

}  // namespace
}  // namespace collbench
