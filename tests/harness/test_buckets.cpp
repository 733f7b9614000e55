// DDP bucket assignment (the rebuilt buckets of compute_bucket_assignment_by_size), checked on
// hand-computed cases and the built-in models, and user-supplied gradient-ready orders.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "collectives/core/error.hpp"
#include "harness/workload/buckets.hpp"

namespace collbench::workload {
namespace {

using Indices = std::vector<std::size_t>;
constexpr std::uint64_t kMiB = 1 << 20;

// One-dimensional params "p0", "p1"... of the given element counts and dtypes.
Model flat(const std::vector<std::pair<std::int64_t, DType>>& sizes) {
  Model m{"flat", "test", {}};
  for (const auto& [n, t] : sizes) m.params.push_back({"p" + std::to_string(m.params.size()), {n}, t});
  return m;
}

Model flat32(const std::vector<std::int64_t>& sizes) {
  std::vector<std::pair<std::int64_t, DType>> s;
  for (std::int64_t n : sizes) s.emplace_back(n, DType::float32);
  return flat(s);
}

Indices in_order(const Model& m) {
  Indices r(m.params.size());
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = i;
  return r;
}

std::vector<Indices> groups(const std::vector<Bucket>& b) {
  std::vector<Indices> g;
  for (const Bucket& x : b) g.push_back(x.params);
  return g;
}

// 104858 float32 elements = 419,432 bytes, just over 0.4 MiB (419,430.4).
constexpr std::int64_t kPoint4MiB = 104858;

// (a) first bucket 1 MiB, later 2 MiB: 2 params = 838,864 B < 1 MiB, 3 = 1,258,296 B >= 1 MiB
// (the overshoot stays in); then 4 params = 1,677,728 < 2 MiB, 5 = 2,097,160 >= 2,097,152; the
// 2 left are closed at the end.
TEST(AssignBuckets, FirstBucketThenCapReachedWithOvershoot) {
  const Model m = flat32(std::vector<std::int64_t>(10, kPoint4MiB));
  const auto b = assign_buckets(m, in_order(m), 2 * kMiB, kMiB, std::nullopt);
  EXPECT_EQ(groups(b), (std::vector<Indices>{{0, 1, 2}, {3, 4, 5, 6, 7}, {8, 9}}));
  EXPECT_EQ(b[0].bytes, 1'258'296u);
  EXPECT_EQ(b[0].count, 3u * kPoint4MiB);
  EXPECT_EQ(b[1].bytes, 2'097'160u);
  EXPECT_EQ(b[2].bytes, 838'864u);
  for (const Bucket& x : b) EXPECT_EQ(x.dtype, DType::float32);
}

// (b) exactly reaching the limit closes the bucket (>=); a param over the cap arriving at an
// empty bucket is a bucket of its own and the next param opens a new one; arriving at a
// non-empty bucket it joins it and closes it.
TEST(AssignBuckets, ParamLargerThanCapIsItsOwnBucket) {
  const std::int64_t one_mib = kMiB / 4, four_mib = kMiB;  // float32 elements
  const Model m = flat32({one_mib, four_mib, 100, 100, four_mib, 100});
  const auto b = assign_buckets(m, in_order(m), 2 * kMiB, kMiB, std::nullopt);
  EXPECT_EQ(groups(b), (std::vector<Indices>{{0}, {1}, {2, 3, 4}, {5}}));
  EXPECT_EQ(b[0].bytes, kMiB);
  EXPECT_EQ(b[1].bytes, 4 * kMiB);
  EXPECT_EQ(b[2].bytes, 4 * kMiB + 800);
}

// (c) the last registered param (4 MiB) comes first in reverse order and fills the 1 MiB
// first bucket alone; the small ones (1 KiB each) share the next.
TEST(AssignBuckets, ReverseOrderPutsLastParamInFirstBucket) {
  const Model m = flat32({256, 256, 256, kMiB});
  EXPECT_EQ(reverse_registration_order(m), (Indices{3, 2, 1, 0}));
  const auto b = assign_buckets(m, reverse_registration_order(m), 25 * kMiB, kMiB, std::nullopt);
  EXPECT_EQ(groups(b), (std::vector<Indices>{{3}, {2, 1, 0}}));
}

// (d) float32 (0.4 MiB each) and bfloat16 (209716 elements = the same 419,432 B) interleaved:
// each dtype has its own open bucket and its own 1 MiB first limit; each closes at its third
// param (ready positions 4 and 5). The two leftovers close at the end, bfloat16 first (the
// newer dtype: PyTorch 1.13.1's _compute_bucket_assignment_by_size on these tensors returned
// [[0, 2, 4], [1, 3, 5], [7], [6]]).
TEST(AssignBuckets, DTypesBucketSeparately) {
  std::vector<std::pair<std::int64_t, DType>> s;
  for (int i = 0; i < 4; ++i) {
    s.emplace_back(kPoint4MiB, DType::float32);
    s.emplace_back(2 * kPoint4MiB, DType::bfloat16);
  }
  const Model m = flat(s);
  const auto b = assign_buckets(m, in_order(m), 2 * kMiB, kMiB, std::nullopt);
  EXPECT_EQ(groups(b), (std::vector<Indices>{{0, 2, 4}, {1, 3, 5}, {7}, {6}}));
  EXPECT_EQ(b[0].dtype, DType::float32);
  EXPECT_EQ(b[1].dtype, DType::bfloat16);
  EXPECT_EQ(b[1].bytes, 1'258'296u);
  EXPECT_EQ(b[1].count, 6u * kPoint4MiB);
  EXPECT_EQ(b[2].dtype, DType::bfloat16);
  EXPECT_EQ(b[3].dtype, DType::float32);
}

// (e) --grad-dtype bfloat16: case (a)'s params become 209,716 B; the first bucket needs 5
// (1,048,580 B >= 1 MiB), the other 5 (1,048,580 < 2 MiB) close at the end. With mixed
// dtypes the override makes one sequence.
TEST(AssignBuckets, GradDTypeOverrideHalvesBytes) {
  const Model m = flat32(std::vector<std::int64_t>(10, kPoint4MiB));
  const auto b = assign_buckets(m, in_order(m), 2 * kMiB, kMiB, DType::bfloat16);
  EXPECT_EQ(groups(b), (std::vector<Indices>{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}}));
  EXPECT_EQ(b[0].bytes, 1'048'580u);
  EXPECT_EQ(b[0].bytes + b[1].bytes, m.bytes() / 2);
  for (const Bucket& x : b) EXPECT_EQ(x.dtype, DType::bfloat16);

  const Model mixed = flat({{kPoint4MiB, DType::float32}, {kPoint4MiB, DType::float64}, {kPoint4MiB, DType::float16}});
  const auto one = assign_buckets(mixed, in_order(mixed), 2 * kMiB, kMiB, DType::float32);
  EXPECT_EQ(groups(one), (std::vector<Indices>{{0, 1, 2}}));
}

TEST(AssignBuckets, RefusesZeroCapsAndBadOrders) {
  const Model m = flat32({10, 10});
  EXPECT_THROW(assign_buckets(m, in_order(m), 0, kMiB, std::nullopt), UsageError);
  EXPECT_THROW(assign_buckets(m, in_order(m), kMiB, 0, std::nullopt), UsageError);
  EXPECT_THROW(assign_buckets(m, Indices{0, 0}, kMiB, kMiB, std::nullopt), std::invalid_argument);
  EXPECT_THROW(assign_buckets(m, Indices{0}, kMiB, kMiB, std::nullopt), std::invalid_argument);
  EXPECT_THROW(assign_buckets(m, Indices{0, 2}, kMiB, kMiB, std::nullopt), std::invalid_argument);
}

std::vector<Bucket> defaults(const Model& m) {
  return assign_buckets(m, reverse_registration_order(m), 25 * kMiB, kMiB, std::nullopt);
}

void expect_partition(const Model& m, const std::vector<Bucket>& b) {
  std::vector<int> seen(m.params.size(), 0);
  std::uint64_t bytes = 0;
  for (const Bucket& x : b) {
    bytes += x.bytes;
    for (std::size_t i : x.params) ++seen[i];
  }
  EXPECT_EQ(bytes, m.bytes()) << m.name;
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << m.params[i].name;
}

// (f) resnet50 at DDP's defaults, walking backward from fc (a later layer4 Bottleneck is
// conv1 4 MiB + conv2 9 MiB + conv3 4 MiB + 24 KiB of BN; reversed, a first block's
// downsample comes before its bn3):
//   b0: fc.bias, fc.weight (7.8 MiB)                                   >= 1 MiB   2 tensors
//   b1: layer4.2 (17.02) + layer4.1 bn3, conv3, bn2, conv2 (+13.02)    = 30.04    15
//   b2: layer4.1 bn1, conv1 (4) + layer4.0 downsample (8), bn3, conv3 (4), bn2, conv2 (9)
//                                                                      = 25.04    12
//   b3: layer4.0 bn1, conv1 (2) + layer3.5..layer3.1 (5 x 4.26) + layer3.0 downsample (2)
//                                                                      = 25.32    51
//   b4: the rest of layer3.0, layer2, layer1, the stem: 9.27 MiB < 25, closed at the end  81
TEST(AssignBuckets, ResNet50Defaults) {
  const Model m = builtin_model("resnet50");
  const auto b = defaults(m);
  ASSERT_EQ(b.size(), 5u);
  ASSERT_EQ(b[0].params.size(), 2u);
  EXPECT_EQ(m.params[b[0].params[0]].name, "fc.bias");
  EXPECT_EQ(m.params[b[0].params[1]].name, "fc.weight");
  EXPECT_EQ(b[0].bytes, (2'048'000u + 1000) * 4);
  const std::size_t sizes[] = {2, 15, 12, 51, 81};
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_EQ(b[i].params.size(), sizes[i]) << "bucket " << i;
  EXPECT_EQ(m.params[b[1].params.back()].name, "layer4.1.conv2.weight");
  EXPECT_EQ(m.params[b[2].params.back()].name, "layer4.0.conv2.weight");
  EXPECT_EQ(m.params[b[3].params.back()].name, "layer3.0.downsample.0.weight");
  EXPECT_EQ(m.params[b[4].params.back()].name, "conv1.weight");
  for (std::size_t i = 1; i < 4; ++i) EXPECT_GE(b[i].bytes, 25 * kMiB);
  EXPECT_LT(b[4].bytes, 25 * kMiB);
  expect_partition(m, b);
}

// The other built-ins at the defaults. A transformer layer is 7,087,872 elements = 27.04 MiB:
//   bert-base: b0 pooler (2.25 MiB); each layer reversed reaches 25 MiB only at its last tensor
//              (query.weight: 24.77 MiB before it), so 12 buckets; the embeddings -> 14.
//   gpt2:      b0 ln_f + h.11.mlp.c_proj (9 MiB); then each bucket runs from one layer's c_fc
//              to the next lower layer's mlp.c_proj.weight (18.04 + 9 MiB): 11; the rest of h.0
//              and the embeddings -> 13.
//   vit-b16:   b0 heads.head (2.9 MiB); each layer closes at its in_proj_weight (20.26 + 6.75),
//              its ln_1 going to the next: 12; the rest (ln_1, pos_embedding, conv_proj,
//              class_token) -> 14.
//   llama2-7b: lm_head alone; every projection is >= 64 MiB, so each is its own bucket, the
//              RMSNorm weights joining the down_proj after them: 7 per layer x 32; embed_tokens
//              -> 1 + 224 + 1 = 226.
TEST(AssignBuckets, BuiltinModelsDefaults) {
  for (const auto& [name, count] : {std::pair<const char*, std::size_t>{"linear", 1},
                                    {"bert-base", 14},
                                    {"gpt2", 13},
                                    {"vit-b16", 14},
                                    {"llama2-7b", 226}}) {
    const Model m = builtin_model(name);
    const auto b = defaults(m);
    EXPECT_EQ(b.size(), count) << name;
    expect_partition(m, b);
  }
  const Model g = builtin_model("gpt2");
  const auto gb = defaults(g);
  EXPECT_EQ(g.params[gb[0].params.back()].name, "h.11.mlp.c_proj.weight");
  EXPECT_EQ(g.params[gb.back().params.back()].name, "wte.weight");
}

// (g) a measured ready order, as text or JSON.
class ReadyOrderFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("collbench_ready_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string error_of(const std::string& path) const {
    try {
      load_ready_order(path, model_);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "<no error>";
  }

  std::filesystem::path dir_;
  const Model model_{"m", "test", {{"fc.weight", {4, 4}}, {"fc.bias", {4}}, {"emb.weight", {10, 4}}}};
};

TEST_F(ReadyOrderFiles, TextAndJson) {
  EXPECT_EQ(load_ready_order(
                write("r.txt", "# from a backward hook\nemb.weight\n\n  fc.bias  # bias first\nfc.weight\n"), model_),
            (Indices{2, 1, 0}));
  EXPECT_EQ(load_ready_order(write("r.json", R"(["fc.bias", "fc.weight", "emb.weight"])"), model_), (Indices{1, 0, 2}));
  EXPECT_EQ(load_ready_order(write("r.list", "\n [\"emb.weight\", \"fc.weight\", \"fc.bias\"]"), model_),
            (Indices{2, 0, 1}));
  const Indices order = load_ready_order(write("o.txt", "fc.bias\nemb.weight\nfc.weight\n"), model_);
  const auto b = assign_buckets(model_, order, 64, 16, std::nullopt);  // 16 B, 160 B, 64 B
  EXPECT_EQ(groups(b), (std::vector<Indices>{{1}, {2}, {0}}));
}

TEST_F(ReadyOrderFiles, RefusesMissingDuplicateUnknown) {
  std::string p = write("missing.txt", "fc.bias\nemb.weight\n");
  std::string e = error_of(p);
  EXPECT_TRUE(e.starts_with("ready order " + p + ": 'fc.weight' is missing")) << e;

  p = write("dup.txt", "emb.weight\nfc.bias\n# again\nemb.weight\nfc.weight\n");
  e = error_of(p);
  EXPECT_TRUE(e.starts_with("ready order " + p + ": line 4: 'emb.weight' listed twice (first at line 1)")) << e;

  p = write("unknown.txt", "fc.weight\nfc.bais\n");
  e = error_of(p);
  EXPECT_TRUE(e.starts_with("ready order " + p + ": line 2: 'fc.bais' is not a parameter of model m")) << e;

  p = write("dup.json", R"(["fc.bias", "fc.bias", "fc.weight", "emb.weight"])");
  e = error_of(p);
  EXPECT_TRUE(e.starts_with("ready order " + p + ": entry 1: 'fc.bias' listed twice (first at entry 0)")) << e;

  p = write("missing.json", R"(["fc.bias", "emb.weight"])");
  EXPECT_TRUE(error_of(p).starts_with("ready order " + p + ": 'fc.weight' is missing")) << error_of(p);

  p = write("bad.json", "[\"fc.bias\",\n 3]");
  EXPECT_TRUE(error_of(p).starts_with("ready order " + p + ": entry 1: 3 is not a parameter name")) << error_of(p);

  p = write("broken.json", "[\"fc.bias\",\n \"fc.weight\"\n \"emb.weight\"]");
  EXPECT_TRUE(error_of(p).starts_with("ready order " + p + ": line 3: malformed JSON")) << error_of(p);

  const std::string none = (dir_ / "none.txt").string();
  EXPECT_TRUE(error_of(none).starts_with("ready order " + none + ": cannot read")) << error_of(none);
}

}  // namespace
}  // namespace collbench::workload
