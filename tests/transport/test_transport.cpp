// The Transport base: the split cache (made once per name, a name means one partition) and the
// membership rule every transport shares.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "collectives/transport/transport.hpp"

namespace collbench {
namespace {

TEST(SplitMembers, OrderedByKeyThenRank) {
  const std::array<int, 6> colors{0, 1, 0, Transport::kNoColor, 1, 0};
  const std::array<int, 6> keys{5, 0, 5, 0, -1, 2};
  EXPECT_EQ(split_members(colors, keys, 0), (std::vector<int>{5, 0, 2}));  // key 2, then 5 (ranks 0 < 2)
  EXPECT_EQ(split_members(colors, keys, 1), (std::vector<int>{4, 1}));
  EXPECT_TRUE(split_members(colors, keys, Transport::kNoColor).empty());
  EXPECT_TRUE(split_members(colors, keys, 9).empty());
}

// A one-rank transport that counts the (uncached) splits it makes.
class CountingSplits final : public Transport {
 public:
  CountingSplits() = default;
  explicit CountingSplits(std::shared_ptr<CallScope> s) : Transport(std::move(s)) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string_view backend() const override { return "counting"; }
  MemorySpace& memory() override { return memory_; }
  Request isend(const void*, std::size_t, int peer, int) override {
    check_peer(peer, "isend");
    return {};
  }
  Request irecv(void*, std::size_t, int peer, int) override {
    check_peer(peer, "irecv");
    return {};
  }
  void wait(Request&) override {}
  void barrier() override {}
  std::string_view split_name() const override { return name_; }
  int made = 0;

 protected:
  std::unique_ptr<Transport> make_split(std::string_view name, int color, int) override {
    ++made;
    if (color < 0) return nullptr;
    auto sub = std::make_unique<CountingSplits>(shared_scope());
    sub->name_ = name;
    return sub;
  }

 private:
  HostMemory memory_;
  std::string name_;
};

TEST(TransportSplit, MadeOncePerNameAndCached) {
  CountingSplits t;
  Transport* a = t.split("node", 0, 0);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(t.split("node", 0, 0), a);
  EXPECT_EQ(t.made, 1) << "a cached split must not communicate again";
  Transport* b = t.split("leaders", 3, 1);
  EXPECT_NE(b, a);
  EXPECT_EQ(t.made, 2);
  EXPECT_EQ(t.split("outside", Transport::kNoColor, 0), nullptr);
  EXPECT_EQ(t.split("outside", Transport::kNoColor, 7), nullptr);  // key is irrelevant without a color
  EXPECT_EQ(t.made, 3);
  EXPECT_EQ(&a->scope(), &t.scope());
  EXPECT_EQ(a->split_name(), "node");
}

TEST(TransportSplit, ANameAlwaysMeansOnePartition) {
  CountingSplits t;
  ASSERT_NE(t.split("node", 0, 0), nullptr);
  try {
    t.split("node", 1, 0);
    FAIL() << "a cached name with another color must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("split 'node' was made with color 0 key 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(t.split("node", 0, 1), Error);
  EXPECT_THROW(t.split("node", Transport::kNoColor, 0), Error);
  EXPECT_EQ(t.made, 1);
}

TEST(TransportErrors, SubTransportErrorsNameTheSplitAndWorldRanks) {
  CountingSplits t;
  t.scope().set_call({"reduce", "tree", 8, -1, "verify"});
  Transport* sub = t.split("node", 0, 0);
  try {
    int x;
    sub->irecv(&x, 4, 3, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "irecv: invalid peer (world size 1) (op=reduce algo=tree size=8 phase=verify rank=0 peer=3 split=node "
                 "world_rank=0)");
  }
}

}  // namespace
}  // namespace collbench
