// Every algorithm on CUDA device memory under mpirun, over {MPI with staging (or CUDA-aware
// MPI when available), NCCL}, and NCCL's own collectives; verified like the CPU suites.
// Needs a GPU: every rank exits 77 (ctest: skipped) without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "collectives/backends/mpi/mpi_device.hpp"
#include "collectives/backends/mpi/mpi_world.hpp"
#include "collectives/backends/nccl/nccl_backend.hpp"
#include "collectives/gpu/gpu.hpp"
#include "collectives/registry.hpp"
#include "collectives/backends/mpi/mpi_transport.hpp"
#include "common/cases.hpp"

namespace collbench {
namespace {

struct Node {  // this rank's place on its node and its GPU
  int local_rank = 0, local_size = 1, devices = 0, device = 0;
  bool own_gpu = true;  // no other rank of this node on this rank's GPU
};
Node g_node;  // set in main before any test

std::unique_ptr<MemorySpace>& memory() {  // one device memory (stream) for the whole run
  static std::unique_ptr<MemorySpace> m = gpu::make_cuda_memory(g_node.device);
  return m;
}

// Runs every case of `e` on `t` and agrees on the failures across ranks.
void verify_entry(Transport& t, const AlgoEntry& e) {
  t.scope().set_timeout(std::chrono::seconds(60));
  testing::CaseSpace s{testing::small_counts(t.size()),
                       {DType::int8, DType::int32, DType::float16, DType::bfloat16, DType::float32, DType::float64},
                       {std::begin(kAllRedOps), std::end(kAllRedOps)}};
  s.counts.push_back((1u << 20) + 3);
  std::string first;
  long failures = 0;
  for (const verify::Case& c : testing::expand(e.op, t.size(), t.rank(), s)) {
    if (c.count > 100000 && (c.dtype != DType::float32 || c.redop != RedOp::sum)) continue;
    t.scope().set_call({std::string(op_name(e.op)), e.algo, c.count * dtype_size(c.dtype), -1, "test"});
    const verify::Outcome o = verify::run_checked(t, e, c);
    long wrong = static_cast<long>(o.check.wrong), total = 0;
    MPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (total && first.empty()) first = testing::describe(c) + ": " + std::to_string(total) + " wrong";
    failures += total != 0;
  }
  EXPECT_EQ(failures, 0) << op_name(e.op) << "/" << e.algo << " on " << t.backend() << ", first: " << first;
}

std::vector<const AlgoEntry*> entries(bool with_nccl_library) {
  std::vector<const AlgoEntry*> out;
  for (const AlgoEntry& e : Registry::get().all())
    if (e.backend == "any" || (with_nccl_library && e.backend == "nccl")) out.push_back(&e);
  return out;
}

std::string param_name(const ::testing::TestParamInfo<const AlgoEntry*>& i) {
  std::string name = std::string(op_name(i.param->op)) + "_" + i.param->algo;
  std::replace(name.begin(), name.end(), ':', '_');  // library:ring_ll -> library_ring_ll
  return name;
}

class MpiOnDevice : public ::testing::TestWithParam<const AlgoEntry*> {};

TEST_P(MpiOnDevice, Verified) {
  MpiTransport mpi(MPI_COMM_WORLD);
  auto t = mpi::make_device_transport(mpi, *memory());  // staged unless MPI is CUDA-aware
  verify_entry(*t, *GetParam());
}

INSTANTIATE_TEST_SUITE_P(Registry, MpiOnDevice, ::testing::ValuesIn(entries(false)), param_name);

class NcclOnDevice : public ::testing::TestWithParam<const AlgoEntry*> {
 protected:
  static void SetUpTestSuite() {
    static MpiWorld world(MPI_COMM_WORLD);  // NCCL's unique id travels over it
    if (nccl::built() && g_node.own_gpu) nccl_ = nccl::make_transport(world, *memory());
  }
  static void TearDownTestSuite() { nccl_.reset(); }
  void SetUp() override {
    if (!nccl::built()) GTEST_SKIP() << "built without NCCL";
    if (!nccl_)
      GTEST_SKIP() << "needs two GPUs: NCCL refuses two ranks on one GPU (" << g_node.local_size
                   << " ranks on this node, " << g_node.devices << " device(s))";
  }
  static std::unique_ptr<Transport> nccl_;
};
std::unique_ptr<Transport> NcclOnDevice::nccl_;

TEST_P(NcclOnDevice, Verified) { verify_entry(*nccl_, *GetParam()); }

INSTANTIATE_TEST_SUITE_P(Registry, NcclOnDevice, ::testing::ValuesIn(entries(true)), param_name);

// A receive nobody sends: draining the NCCL transport's stream times out, names the peer and
// aborts the communicator instead of hanging. Runs last (its communicator is unusable afterwards).
TEST(NcclTimeout, ZZ_NamesThePeer) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (!nccl::built() || !g_node.own_gpu || size < 2)
    GTEST_SKIP() << "needs two GPUs: NCCL, 2 ranks, one GPU each";
  MpiWorld world(MPI_COMM_WORLD);
  auto t = nccl::make_transport(world, *memory());
  t->scope().set_timeout(std::chrono::seconds(3));
  if (t->rank() == 0) {
    Buffer b(t->memory(), 64);
    try {
      t->recv(b.data(), 64, 1, 9);  // launched on the stream; the host waits at the drain
      t->memory().synchronize();    // once per sample in the harness, under the timeout
      ADD_FAILURE() << "expected a timeout";
    } catch (const TimeoutError& e) {
      EXPECT_NE(std::string(e.what()).find("peer=1"), std::string::npos) << e.what();
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace collbench

int main(int argc, char** argv) {
  using namespace collbench;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string why;
  g_node.devices = gpu::device_count(&why);
  if (g_node.devices == 0) {
    if (rank == 0) std::printf("SKIPPED: %s\n", why.c_str());
    MPI_Finalize();
    return 77;
  }
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &g_node.local_rank);
  MPI_Comm_size(local, &g_node.local_size);
  // Staging/MPI runs may share a GPU between ranks; NCCL refuses that (checked per suite, by
  // device UUID, so Slurm's one-GPU-per-task binding counts as one GPU per rank).
  g_node.device = gpu::select_device(g_node.local_rank, g_node.local_size);
  char mine[48] = {};
  gpu::device_uuid(g_node.device).copy(mine, sizeof mine - 1);
  std::vector<char> all(sizeof mine * static_cast<std::size_t>(g_node.local_size));
  MPI_Allgather(mine, sizeof mine, MPI_CHAR, all.data(), sizeof mine, MPI_CHAR, local);
  MPI_Comm_free(&local);
  std::vector<std::string> uuids;
  for (int r = 0; r < g_node.local_size; ++r) uuids.emplace_back(all.data() + sizeof mine * static_cast<std::size_t>(r));
  int own = gpu::device_sharing(uuids).ranks_per_device == 1;
  MPI_Allreduce(MPI_IN_PLACE, &own, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);  // NCCL set-up is collective
  g_node.own_gpu = own != 0;
  ::testing::InitGoogleTest(&argc, argv);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  memory().reset();
  MPI_Finalize();
  return rc;
}
