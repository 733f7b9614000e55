// DDP workload models: the built-in parameter lists against the published architectures, and
// JSON/YAML model files (round trip, and one-line errors naming the file and line).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "collectives/core/error.hpp"
#include "harness/workload/model.hpp"

namespace collbench::workload {
namespace {

using Dims = std::vector<std::int64_t>;

const Param& find(const Model& m, const std::string& name) {
  for (const Param& p : m.params)
    if (p.name == name) return p;
  ADD_FAILURE() << m.name << " has no parameter " << name;
  static const Param kNone{};
  return kNone;
}

// A directory of files for one test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    dir_ = std::filesystem::temp_directory_path() /
           ("collbench_models_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~TempDir() { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

 private:
  std::filesystem::path dir_;
};

std::string load_error(const std::string& path) {
  try {
    load_model_file(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "<no error>";
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(BuiltinModels, Names) {
  EXPECT_EQ(builtin_model_names(),
            (std::vector<std::string>{"linear", "resnet50", "bert-base", "gpt2", "vit-b16", "llama2-7b"}));
}

// Element totals as published (torchvision / HF model cards); tensor counts are
// len(list(named_parameters())), derived from the architecture:
//   resnet50: stem conv1 + bn1 (3) + 16 Bottlenecks x 9 (3 convs, 3 BNs of 2) + 4 downsamples x 3
//             (conv + BN) + fc (2) = 3 + 144 + 12 + 2 = 161
//   bert-base: embeddings 3 + LayerNorm 2 = 5; per layer q/k/v/attn-out (8) + 2 LayerNorms (4) +
//              intermediate (2) + output (2) = 16, x12 = 192; pooler 2 -> 199
//   gpt2:     wte, wpe (2) + per layer ln_1, c_attn, c_proj, ln_2, c_fc, c_proj (6 x 2 = 12), x12 = 144
//             + ln_f (2) = 148
//   vit-b16:  class_token, conv_proj (2), pos_embedding (4) + per layer ln_1 (2), in_proj w+b (2),
//             out_proj (2), ln_2 (2), mlp.0 (2), mlp.3 (2) = 12, x12 = 144; encoder.ln (2), heads.head (2)
//             -> 152
//   llama2-7b: embed_tokens + per layer q/k/v/o, gate/up/down, 2 RMSNorms (9), x32 = 288; norm, lm_head -> 291
TEST(BuiltinModels, PublishedTotals) {
  struct Expect {
    const char* name;
    std::int64_t count;
    std::size_t tensors;
  };
  for (const Expect& e : {Expect{"linear", 21, 2}, Expect{"resnet50", 25'557'032, 161},
                          Expect{"bert-base", 109'482'240, 199}, Expect{"gpt2", 124'439'808, 148},
                          Expect{"vit-b16", 86'567'656, 152}, Expect{"llama2-7b", 6'738'415'616, 291}}) {
    const Model m = builtin_model(e.name);
    EXPECT_EQ(m.name, e.name);
    EXPECT_EQ(m.source, "builtin");
    EXPECT_EQ(m.count(), e.count) << e.name;
    EXPECT_EQ(m.params.size(), e.tensors) << e.name;
    EXPECT_EQ(m.bytes(), static_cast<std::uint64_t>(e.count) * 4) << e.name;
    std::set<std::string> names;
    for (const Param& p : m.params) {
      EXPECT_EQ(p.dtype, DType::float32) << p.name;
      EXPECT_TRUE(names.insert(p.name).second) << "duplicate " << p.name;
    }
  }
}

TEST(BuiltinModels, SpotNamesAndShapes) {
  const Model lin = builtin_model("linear");
  EXPECT_EQ(lin.params[0].name, "weight");
  EXPECT_EQ(lin.params[0].shape, (Dims{1, 20}));
  EXPECT_EQ(lin.params[1].name, "bias");

  const Model r = builtin_model("resnet50");
  EXPECT_EQ(r.params.front().name, "conv1.weight");
  EXPECT_EQ(r.params.front().shape, (Dims{64, 3, 7, 7}));
  EXPECT_EQ(r.params[1].name, "bn1.weight");
  EXPECT_EQ(find(r, "layer1.0.bn1.bias").shape, (Dims{64}));
  EXPECT_EQ(find(r, "layer1.0.downsample.0.weight").shape, (Dims{256, 64, 1, 1}));
  EXPECT_EQ(find(r, "layer3.0.downsample.0.weight").shape, (Dims{1024, 512, 1, 1}));
  EXPECT_EQ(find(r, "layer4.2.conv2.weight").shape, (Dims{512, 512, 3, 3}));
  EXPECT_EQ(r.params.back().name, "fc.bias");
  EXPECT_EQ(find(r, "fc.weight").shape, (Dims{1000, 2048}));
  for (const Param& p : r.params) EXPECT_FALSE(has(p.name, "layer1.1.downsample")) << "only first blocks downsample";

  const Model b = builtin_model("bert-base");
  EXPECT_EQ(b.params.front().name, "embeddings.word_embeddings.weight");
  EXPECT_EQ(b.params.front().shape, (Dims{30522, 768}));
  EXPECT_EQ(find(b, "encoder.layer.0.attention.self.query.weight").shape, (Dims{768, 768}));
  EXPECT_EQ(find(b, "encoder.layer.11.intermediate.dense.weight").shape, (Dims{3072, 768}));
  EXPECT_EQ(find(b, "encoder.layer.11.output.dense.weight").shape, (Dims{768, 3072}));
  EXPECT_EQ(b.params.back().name, "pooler.dense.bias");

  const Model g = builtin_model("gpt2");
  EXPECT_EQ(g.params[0].name, "wte.weight");
  EXPECT_EQ(find(g, "h.0.attn.c_attn.weight").shape, (Dims{768, 2304}));  // Conv1D: [in, out]
  EXPECT_EQ(find(g, "h.11.mlp.c_proj.weight").shape, (Dims{3072, 768}));
  EXPECT_EQ(g.params.back().name, "ln_f.bias");
  for (const Param& p : g.params) EXPECT_NE(p.name, "lm_head.weight") << "tied to wte";

  const Model v = builtin_model("vit-b16");
  EXPECT_EQ(v.params[0].name, "class_token");  // the root module's own parameter comes first
  EXPECT_EQ(v.params[1].name, "conv_proj.weight");
  EXPECT_EQ(v.params[1].shape, (Dims{768, 3, 16, 16}));
  EXPECT_EQ(find(v, "encoder.pos_embedding").shape, (Dims{1, 197, 768}));
  EXPECT_EQ(find(v, "encoder.layers.encoder_layer_0.self_attention.in_proj_weight").shape, (Dims{2304, 768}));
  EXPECT_EQ(find(v, "encoder.layers.encoder_layer_11.mlp.3.weight").shape, (Dims{768, 3072}));
  EXPECT_EQ(find(v, "heads.head.weight").shape, (Dims{1000, 768}));

  const Model l = builtin_model("llama2-7b");
  EXPECT_EQ(l.params[0].name, "model.embed_tokens.weight");
  EXPECT_EQ(find(l, "model.layers.0.self_attn.q_proj.weight").shape, (Dims{4096, 4096}));
  EXPECT_EQ(find(l, "model.layers.31.mlp.down_proj.weight").shape, (Dims{4096, 11008}));
  EXPECT_EQ(find(l, "model.layers.31.post_attention_layernorm.weight").shape, (Dims{4096}));
  EXPECT_EQ(l.params.back().name, "lm_head.weight");
  EXPECT_EQ(l.params.back().shape, (Dims{32000, 4096}));
}

TEST(BuiltinModels, UnknownNameListsBuiltins) {
  for (const char* bad : {"resnet", "GPT2", "", "model.txt"}) {
    try {
      resolve_model(bad);
      ADD_FAILURE() << bad;
    } catch (const UsageError& e) {
      const std::string m = e.what();
      EXPECT_TRUE(has(m, std::string("unknown model '") + bad + "'")) << m;
      for (const std::string& n : builtin_model_names()) EXPECT_TRUE(has(m, n)) << m;
      EXPECT_TRUE(has(m, "model file (.json/.yaml)")) << m;
    }
  }
  EXPECT_THROW(builtin_model("bert"), UsageError);
  EXPECT_EQ(resolve_model("gpt2").count(), 124'439'808);
}

TEST(ModelFile, JsonAndYamlRoundTrip) {
  const TempDir dir;
  // A built-in written out as both syntaxes reads back identical.
  const Model r = builtin_model("resnet50");
  nlohmann::json j = {{"name", "resnet50-copy"}, {"params", nlohmann::json::array()}};
  YAML::Emitter y;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "resnet50-copy" << YAML::Key << "params" << YAML::Value
    << YAML::BeginSeq;
  for (const Param& p : r.params) {
    j["params"].push_back({{"name", p.name}, {"shape", p.shape}, {"dtype", "float32"}});
    y << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << p.name << YAML::Key << "shape"
      << YAML::Value << YAML::Flow << p.shape << YAML::EndMap;
  }
  y << YAML::EndSeq << YAML::EndMap;
  for (const std::string& path : {dir.write("r.json", j.dump(2)), dir.write("r.yaml", y.c_str())}) {
    const Model m = resolve_model(path);
    EXPECT_EQ(m.name, "resnet50-copy");
    EXPECT_EQ(m.source, "file:" + path);
    ASSERT_EQ(m.params.size(), r.params.size()) << path;
    for (std::size_t i = 0; i < m.params.size(); ++i) {
      EXPECT_EQ(m.params[i].name, r.params[i].name);
      EXPECT_EQ(m.params[i].shape, r.params[i].shape);
      EXPECT_EQ(m.params[i].dtype, DType::float32);
    }
    EXPECT_EQ(m.count(), r.count());
  }
  // dtypes as PyTorch prints them, a scalar param, and the name defaulting to the file's stem.
  const std::string yml = dir.write("mixed.yml", R"(params:
  - {name: emb.weight, shape: [10, 4], dtype: torch.bfloat16}
  - name: scale
    shape: []
    dtype: float16
  - {name: head.weight, shape: [3, 4], dtype: torch.float64}
  - {name: head.bias, shape: [3]}
)");
  const Model m = load_model_file(yml);
  EXPECT_EQ(m.name, "mixed");
  ASSERT_EQ(m.params.size(), 4u);
  EXPECT_EQ(m.params[0].dtype, DType::bfloat16);
  EXPECT_EQ(m.params[1].shape, Dims{});
  EXPECT_EQ(m.params[1].numel(), 1);
  EXPECT_EQ(m.params[1].dtype, DType::float16);
  EXPECT_EQ(m.params[2].dtype, DType::float64);
  EXPECT_EQ(m.params[3].dtype, DType::float32);
  EXPECT_EQ(m.count(), 40 + 1 + 12 + 3);
  EXPECT_EQ(m.bytes(), 40u * 2 + 2 + 12 * 8 + 3 * 4);
}

TEST(ModelFile, MalformedJsonReportsLine) {
  const TempDir dir;
  const std::string path = dir.write("m.json", "{\n  \"params\": [\n    {\"name\": \"a\" \"shape\": [1]}\n  ]\n}\n");
  const std::string e = load_error(path);
  EXPECT_TRUE(has(e, "model file " + path + ": line 3: ")) << e;
  EXPECT_FALSE(has(e, "json.exception")) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  const std::string eof = load_error(dir.write("eof.json", "{\"params\": [\n"));
  EXPECT_TRUE(has(eof, ": line 2: ")) << eof;
}

TEST(ModelFile, YamlErrorsReportLine) {
  const TempDir dir;
  const std::string syntax = load_error(dir.write("s.yaml", "name: x\nparams:\n  - {name: a, shape: [1, 2}\n"));
  EXPECT_TRUE(has(syntax, ".yaml: line 3: YAML syntax error")) << syntax;
  const std::string neg =
      load_error(dir.write("n.yaml", "params:\n  - name: a\n    shape: [1]\n  - name: b\n    shape: [2, -3]\n"));
  EXPECT_TRUE(has(neg, "n.yaml: line 4: params[1]: shape dim -3 is negative")) << neg;
}

TEST(ModelFile, RefusesBadContentNamingTheFile) {
  const TempDir dir;
  struct Case {
    const char* file;
    const char* text;
    const char* why;
  };
  const Case cases[] = {
      {"neg.json", R"({"params": [{"name": "a", "shape": [2, -1]}]})", "params[0]: shape dim -1 is negative"},
      {"frac.json", R"({"params": [{"name": "a", "shape": [1.5]}]})", "shape dim '1.5' is not a whole number"},
      {"str.json", R"({"params": [{"name": "a", "shape": ["4"]}]})", "is not a whole number"},
      {"frac.yaml", "params: [{name: a, shape: [1.5]}]", "shape dim '1.5' is not a whole number"},
      {"dtype.json", R"({"params": [{"name": "a", "shape": [1], "dtype": "float8"}]})", "unknown dtype 'float8'"},
      {"int.yaml", "params: [{name: a, shape: [1], dtype: int64}]", "unknown dtype 'int64'"},
      {"dup.json", R"({"params": [{"name": "a", "shape": [1]}, {"name": "a", "shape": [2]}]})",
       "params[1]: duplicate name 'a' (params[0])"},
      {"dup.yaml", "params:\n  - {name: a, shape: [1]}\n  - {name: a, shape: [1]}\n",
       "line 3: params[1]: duplicate name 'a'"},
      {"none.json", R"({"name": "x"})", "missing 'params'"},
      {"none.yaml", "name: x\n", "missing 'params'"},
      {"empty.json", R"({"params": []})", "'params' is empty"},
      {"empty.yaml", "params: []\n", "'params' is empty"},
      {"noname.json", R"({"params": [{"shape": [1]}]})", "params[0]: missing 'name'"},
      {"noshape.yaml", "params: [{name: a}]", "params[0]: 'a' has no 'shape'"},
      {"typo.json", R"({"params": [{"name": "a", "shap": [1]}]})", "unknown key 'shap'"},
      {"list.json", R"([{"name": "a", "shape": [1]}])", "not a JSON object"},
      {"huge.json", R"({"params": [{"name": "a", "shape": [4294967296, 4294967296]}]})", "too many elements"},
      {"blank.yaml", "", "the file is empty"},
  };
  for (const Case& c : cases) {
    const std::string path = dir.write(c.file, c.text);
    const std::string e = load_error(path);
    EXPECT_TRUE(has(e, "model file " + path + ": ")) << e;
    EXPECT_TRUE(has(e, c.why)) << c.file << ": " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(ModelFile, UnreadableOrWrongExtension) {
  const TempDir dir;
  const std::string missing = (std::filesystem::temp_directory_path() / "collbench_no_such_model.json").string();
  EXPECT_TRUE(has(load_error(missing), "model file " + missing + ": cannot read")) << load_error(missing);
  const std::string txt = dir.write("m.txt", "{}");
  EXPECT_TRUE(has(load_error(txt), "unknown extension")) << load_error(txt);
  EXPECT_THROW(resolve_model(txt), UsageError);
}

}  // namespace
}  // namespace collbench::workload
