// The node-aware algorithms (schedules/hier.hpp and every "hier*" algorithm) on the thread
// transport under node layouts the default suite (one node) never makes: blocked, round-robin,
// uneven, one rank per node. Each rank checks its own result exactly; hier_ring must refuse
// uneven layouts on every rank, before any message.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "collectives/registry.hpp"
#include "collectives/schedules/hier.hpp"
#include "collectives/backends/thread/thread_transport.hpp"
#include "common/cases.hpp"

namespace collbench {
namespace {

// rank -> node label
const std::vector<std::vector<int>> kLayouts = {
    {0, 1},                 // 2 x 1
    {0, 0, 1, 1},           // 2 x 2 blocked
    {0, 1, 0, 1},           // 2 x 2 round-robin
    {0, 0, 0, 1},           // uneven 3 + 1
    {0, 1, 1, 1},           // uneven 1 + 3
    {0, 0, 1, 1, 2, 2},     // 3 x 2
    {0, 0, 0, 1, 1, 1},     // 2 x 3
    {0, 1, 2, 0, 1, 2, 0},  // uneven round-robin 3 + 2 + 2
    {5, 5, 9, 9, 9},        // uneven 2 + 3, arbitrary labels
};

std::string name_of(const std::vector<int>& layout) {
  std::string s;
  for (int n : layout) s += std::to_string(n);
  return s;
}

struct HierCase {
  const AlgoEntry* entry;
  std::vector<int> layout;
};

std::vector<HierCase> hier_cases() {
  std::vector<HierCase> out;
  for (const AlgoEntry& e : Registry::get().all())
    if (e.backend == "any" && e.algo.starts_with("hier"))
      for (const auto& l : kLayouts) out.push_back({&e, l});
  return out;
}

class Hier : public ::testing::TestWithParam<HierCase> {};

TEST_P(Hier, ExactOnLayout) {
  const HierCase& hc = GetParam();
  const AlgoEntry& e = *hc.entry;
  const int n = static_cast<int>(hc.layout.size());
  const patterns::NodeLayout layout(hc.layout);
  const bool refuses = e.algo == "hier_ring" && layout.uneven();
  std::vector<std::string> failures;
  std::mutex mu;
  testing::CaseSpace space{
      testing::small_counts(n), {DType::float32, DType::int8, DType::float64}, {RedOp::sum, RedOp::max}};
  space.counts.push_back(40000);  // past the zero-copy small-message paths
  ThreadWorld w(n);
  w.run([&](ThreadTransport& t) {
    t.scope().set_timeout(std::chrono::seconds(30));
    t.set_node_layout(hc.layout);
    for (const verify::Case& c : testing::expand(e.op, n, t.rank(), space)) {
      t.scope().set_call({std::string(op_name(e.op)), e.algo, c.count * dtype_size(c.dtype), -1, "test"});
      std::string line;
      const verify::Outcome o = verify::run_checked(t, e, c);  // NotSupported -> skipped
      if (refuses != o.skipped)
        line = refuses ? "ran on an uneven layout" : "refused: " + o.skip_reason;
      else if (o.check.wrong)
        line = std::to_string(o.check.wrong) + " wrong, first at " + std::to_string(o.check.first_index) +
               " expected " + std::to_string(o.check.expected) + " got " + std::to_string(o.check.got);
      if (!line.empty()) {
        std::lock_guard lk(mu);
        failures.push_back(testing::describe(c) + " rank " + std::to_string(t.rank()) + ": " + line);
      }
    }
  });
  for (std::size_t i = 0; i < failures.size() && i < 20; ++i) ADD_FAILURE() << failures[i];
  EXPECT_TRUE(failures.empty()) << failures.size() << " failing (case, rank) pairs";
}

INSTANTIATE_TEST_SUITE_P(Layouts, Hier, ::testing::ValuesIn(hier_cases()), [](const auto& i) {
  return std::string(op_name(i.param.entry->op)) + "_" + i.param.entry->algo + "_" + name_of(i.param.layout);
});

TEST(HierGroups, SplitFollowsTheLayout) {
  const std::vector<int> labels = {0, 1, 0, 1, 1};  // nodes {0, 2} and {1, 3, 4}
  ThreadWorld w(5);
  std::mutex mu;
  std::vector<std::vector<int>> seen(5);  // per rank: node size, node rank, rail size, rail rank, leads
  w.run([&](ThreadTransport& t) {
    t.set_node_layout(labels);
    const schedules::hier::Groups g = schedules::hier::split(t);
    std::lock_guard lk(mu);
    seen[static_cast<std::size_t>(t.rank())] = {g.node->size(), g.node->rank(), g.rail->size(), g.rail->rank(),
                                                g.leaders ? g.leaders->rank() : -1};
    // The sub-transport's own layout: one node, every rank of it.
    EXPECT_EQ(g.node->node_layout().nodes(), 1);
    EXPECT_EQ(g.rail->node_layout().nodes(), g.rail->size());
  });
  EXPECT_EQ(seen[0], (std::vector<int>{2, 0, 2, 0, 0}));
  EXPECT_EQ(seen[1], (std::vector<int>{3, 0, 2, 1, 1}));
  EXPECT_EQ(seen[2], (std::vector<int>{2, 1, 2, 0, -1}));
  EXPECT_EQ(seen[3], (std::vector<int>{3, 1, 2, 1, -1}));
  EXPECT_EQ(seen[4], (std::vector<int>{3, 2, 1, 0, -1}));  // local index 2: only node 1 has one
}

TEST(HierGroups, LayoutIsSetOnceOnARootBeforeSplits) {
  ThreadWorld w(2);
  w.run([&](ThreadTransport& t) {
    EXPECT_EQ(t.node_layout().nodes(), 1);  // unset: one node
    EXPECT_THROW(t.set_node_layout({0}), Error);
    t.set_node_layout({0, 1});
    EXPECT_EQ(t.node_layout().nodes(), 2);
    Transport* sub = t.split("all", 0, -t.rank());  // reversed: sub rank 0 is world rank 1
    EXPECT_EQ(sub->node_layout().node_of(0), 0);    // nodes numbered by lowest rank, in the sub
    EXPECT_EQ(sub->world_rank(0), 1);
    EXPECT_THROW(t.set_node_layout({0, 0}), Error);
    EXPECT_THROW(sub->set_node_layout({0, 0}), Error);
  });
}

}  // namespace
}  // namespace collbench
