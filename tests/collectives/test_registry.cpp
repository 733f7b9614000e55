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

TEST(Registry, NoDuplicateKeys) {
  std::set<std::tuple<Op, std::string, std::string>> keys;
  for (const AlgoEntry& e : Registry::get().all()) EXPECT_TRUE(keys.insert({e.op, e.algo, e.backend}).second) << e.algo;
}

}  // namespace
}  // namespace collbench
