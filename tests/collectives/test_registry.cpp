#include <gtest/gtest.h>

#include <set>

#include "collectives/registry.hpp"

namespace collbench {
namespace {

// The algorithms the project promises (issue #2), each registered once with a description.
TEST(Registry, EverySeedAlgorithmIsRegistered) {
  const std::pair<Op, const char*> expected[] = {
      {Op::broadcast, "naive"},   {Op::broadcast, "tree"},         {Op::broadcast, "ring"},
      {Op::reduce, "naive"},      {Op::reduce, "tree"},            {Op::allreduce, "naive"},
      {Op::allreduce, "butterfly"}, {Op::allreduce, "ring"},       {Op::allreduce, "rabenseifner"},
      {Op::gather, "naive"},      {Op::gather, "tree"},            {Op::allgather, "naive"},
      {Op::allgather, "ring"},    {Op::allgather, "recursive_doubling"}, {Op::scatter, "naive"},
      {Op::scatter, "tree"},      {Op::reduce_scatter, "ring"},    {Op::alltoall, "pairwise"}};
  for (const auto& [op, algo] : expected) {
    const AlgoEntry* e = Registry::get().find(op, algo, "thread");
    ASSERT_NE(e, nullptr) << op_name(op) << "/" << algo;
    EXPECT_FALSE(e->description.empty());
    EXPECT_FALSE(e->requirements.empty());
  }
}

TEST(Registry, LibraryEntriesExistForEveryOpOnMpiOnly) {
  for (Op op : kAllOps) {
    const AlgoEntry* e = Registry::get().find(op, "library", "mpi");
    ASSERT_NE(e, nullptr) << op_name(op);
    EXPECT_EQ(e->backend, "mpi");
    EXPECT_EQ(Registry::get().find(op, "library", "thread"), nullptr);
  }
}

// Traits: collbench's algorithms state theirs where they register (a rank below kUnranked, so a
// new algorithm's author decides where it stands in colltune's tie-break); node-aware and peer
// memory exclude each other.
TEST(RegistryTraits, EveryCollbenchAlgorithmStatesItsTraits) {
  for (const AlgoEntry& e : Registry::get().all()) {
    if (e.library()) continue;
    EXPECT_LT(e.traits.simplicity_rank, AlgoTraits::kUnranked) << op_name(e.op) << "/" << e.algo;
    EXPECT_GT(e.traits.simplicity_rank, 10) << op_name(e.op) << "/" << e.algo << ": the library's ranks are 0 and 10";
    EXPECT_FALSE(e.traits.node_aware && e.traits.peer_memory) << op_name(e.op) << "/" << e.algo;
  }
}

// The node-aware and peer-memory algorithms as they are today (the analysis read them from the
// names hier* and shm before the registry carried traits).
TEST(RegistryTraits, NodeAwareAndPeerMemoryAlgorithms) {
  std::set<std::pair<std::string, std::string>> aware, peer;
  for (const AlgoEntry& e : Registry::get().all()) {
    if (e.library()) continue;
    if (e.traits.node_aware) aware.insert({std::string(op_name(e.op)), e.algo});
    if (e.traits.peer_memory) peer.insert({std::string(op_name(e.op)), e.algo});
  }
  const std::set<std::pair<std::string, std::string>> want_aware{
      {"allreduce", "hier_ring"}, {"allreduce", "hier_leader"}, {"broadcast", "hier"}, {"allgather", "hier"}};
  const std::set<std::pair<std::string, std::string>> want_peer{
      {"broadcast", "shm"}, {"reduce", "shm"}, {"allreduce", "shm"}, {"allgather", "shm"}, {"reduce_scatter", "shm"}};
  EXPECT_EQ(aware, want_aware);
  EXPECT_EQ(peer, want_peer);
}

// Library entries registered without traits take Registry::default_traits (from the registry's
// own facts: "library", on_request), and library() from the backend; coll/han states its own.
TEST(RegistryTraits, LibraryEntriesTakeDefaultTraits) {
  const auto traits = [](const char* algo, const char* backend, bool on_request = false) {
    AlgoEntry e{Op::allreduce, algo, backend};
    e.on_request = on_request;
    return Registry::default_traits(e);
  };
  EXPECT_EQ(traits("library", "mpi").simplicity_rank, 0);
  EXPECT_FALSE(traits("library", "nccl").node_aware);
  EXPECT_EQ(traits("library:ring", "mpi", true).simplicity_rank, AlgoTraits::kUnranked);
  EXPECT_FALSE(traits("library:ring", "mpi", true).node_aware || traits("library:ring", "mpi", true).peer_memory);
  if (const AlgoEntry* han = Registry::get().find(Op::allreduce, "han", "mpi")) {  // stated where it registers
    EXPECT_TRUE(han->traits.node_aware);
    EXPECT_EQ(han->traits.simplicity_rank, 10);
  }
  const AlgoTraits neutral = traits("ring", "any");  // collbench's, registered without traits
  EXPECT_FALSE(neutral.node_aware || neutral.peer_memory);
  EXPECT_EQ(neutral.simplicity_rank, AlgoTraits::kUnranked);
  const AlgoEntry* lib = Registry::get().find(Op::allreduce, "library", "mpi");
  ASSERT_NE(lib, nullptr);
  EXPECT_TRUE(lib->library());
  EXPECT_EQ(lib->traits.simplicity_rank, 0);
  EXPECT_FALSE(Registry::get().find(Op::allreduce, "ring", "mpi")->library());
}

TEST(Registry, NoDuplicateKeys) {
  std::set<std::tuple<Op, std::string, std::string>> keys;
  for (const AlgoEntry& e : Registry::get().all()) EXPECT_TRUE(keys.insert({e.op, e.algo, e.backend}).second) << e.algo;
}

}  // namespace
}  // namespace collbench
