#include "harness/workload/model.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "collectives/core/error.hpp"
#include "harness/workload/text_file.hpp"

namespace collbench::workload {

std::int64_t Param::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::int64_t Model::count() const {
  std::int64_t n = 0;
  for (const Param& p : params) n += p.numel();
  return n;
}

std::uint64_t Model::bytes() const {
  std::uint64_t n = 0;
  for (const Param& p : params) n += static_cast<std::uint64_t>(p.numel()) * dtype_size(p.dtype);
  return n;
}

namespace {

using Dims = std::vector<std::int64_t>;

// Appends parameters the way torch.nn modules register them (weight before bias), so the
// generators below read like the modules' __init__.
class Params {
 public:
  void add(std::string name, Dims shape) { list_.push_back({std::move(name), std::move(shape), DType::float32}); }
  // nn.Linear / HF Linear: weight [out, in].
  void linear(const std::string& m, std::int64_t in, std::int64_t out, bool bias = true) {
    add(m + ".weight", {out, in});
    if (bias) add(m + ".bias", {out});
  }
  // HF GPT-2's Conv1D stores the transpose: weight [in, out].
  void conv1d(const std::string& m, std::int64_t in, std::int64_t out) {
    add(m + ".weight", {in, out});
    add(m + ".bias", {out});
  }
  void conv2d(const std::string& m, std::int64_t in, std::int64_t out, std::int64_t k, bool bias) {
    add(m + ".weight", {out, in, k, k});
    if (bias) add(m + ".bias", {out});
  }
  // LayerNorm and BatchNorm (affine; running stats are buffers); RMSNorm has no bias.
  void norm(const std::string& m, std::int64_t dim, bool bias = true) {
    add(m + ".weight", {dim});
    if (bias) add(m + ".bias", {dim});
  }
  void embedding(const std::string& m, std::int64_t rows, std::int64_t dim) { add(m + ".weight", {rows, dim}); }
  std::vector<Param> take() { return std::move(list_); }

 private:
  std::vector<Param> list_;
};

std::string at(const std::string& prefix, int i) { return prefix + std::to_string(i); }

// The seed's toy model: nn.Linear(20, 1).
std::vector<Param> linear() {
  Params p;
  p.add("weight", {1, 20});  // a bare module: no prefix
  p.add("bias", {1});
  return p.take();
}

// torchvision resnet50: Bottleneck blocks [3, 4, 6, 3], expansion 4, convs without bias,
// BatchNorm after each conv, a 1x1 conv + BN downsample where the block changes shape.
std::vector<Param> resnet50() {
  constexpr int kBlocks[] = {3, 4, 6, 3};
  constexpr std::int64_t kExpansion = 4, kStem = 64, kClasses = 1000;
  Params p;
  p.conv2d("conv1", 3, kStem, 7, false);
  p.norm("bn1", kStem);
  std::int64_t in = kStem;
  for (int s = 0; s < 4; ++s) {
    const std::int64_t planes = kStem << s, out = planes * kExpansion;
    const int stride = s == 0 ? 1 : 2;
    for (int b = 0; b < kBlocks[s]; ++b) {
      const std::string m = at("layer", s + 1) + "." + std::to_string(b);
      p.conv2d(m + ".conv1", in, planes, 1, false);
      p.norm(m + ".bn1", planes);
      p.conv2d(m + ".conv2", planes, planes, 3, false);
      p.norm(m + ".bn2", planes);
      p.conv2d(m + ".conv3", planes, out, 1, false);
      p.norm(m + ".bn3", out);
      if (b == 0 && (stride != 1 || in != out)) {  // torchvision ResNet._make_layer
        p.conv2d(m + ".downsample.0", in, out, 1, false);
        p.norm(m + ".downsample.1", out);
      }
      in = out;
    }
  }
  p.linear("fc", in, kClasses);
  return p.take();
}

// HF BertModel (bert-base-uncased), pooler included, no pre-training heads: embeddings (word,
// position, token type, LayerNorm), 12 encoder layers (q/k/v, attention output dense +
// LayerNorm, intermediate dense, output dense + LayerNorm), pooler dense. The 12 heads split
// the 768-wide projections and add no parameters.
std::vector<Param> bert_base() {
  constexpr std::int64_t kVocab = 30522, kHidden = 768, kLayers = 12, kInter = 3072, kPositions = 512, kTypes = 2;
  Params p;
  p.embedding("embeddings.word_embeddings", kVocab, kHidden);
  p.embedding("embeddings.position_embeddings", kPositions, kHidden);
  p.embedding("embeddings.token_type_embeddings", kTypes, kHidden);
  p.norm("embeddings.LayerNorm", kHidden);
  for (int l = 0; l < kLayers; ++l) {
    const std::string m = at("encoder.layer.", l);
    for (const char* proj : {"query", "key", "value"}) p.linear(m + ".attention.self." + proj, kHidden, kHidden);
    p.linear(m + ".attention.output.dense", kHidden, kHidden);
    p.norm(m + ".attention.output.LayerNorm", kHidden);
    p.linear(m + ".intermediate.dense", kHidden, kInter);
    p.linear(m + ".output.dense", kInter, kHidden);
    p.norm(m + ".output.LayerNorm", kHidden);
  }
  p.linear("pooler.dense", kHidden, kHidden);
  return p.take();
}

// HF GPT2Model (small). The LM head of GPT2LMHeadModel is tied to wte, so it adds no parameter.
std::vector<Param> gpt2() {
  constexpr std::int64_t kVocab = 50257, kPositions = 1024, kEmbd = 768, kLayers = 12, kInner = 4 * kEmbd;
  Params p;
  p.embedding("wte", kVocab, kEmbd);
  p.embedding("wpe", kPositions, kEmbd);
  for (int l = 0; l < kLayers; ++l) {
    const std::string m = at("h.", l);
    p.norm(m + ".ln_1", kEmbd);
    p.conv1d(m + ".attn.c_attn", kEmbd, 3 * kEmbd);
    p.conv1d(m + ".attn.c_proj", kEmbd, kEmbd);
    p.norm(m + ".ln_2", kEmbd);
    p.conv1d(m + ".mlp.c_fc", kEmbd, kInner);
    p.conv1d(m + ".mlp.c_proj", kInner, kEmbd);
  }
  p.norm("ln_f", kEmbd);
  return p.take();
}

// torchvision vit_b_16. named_parameters() yields a module's own parameters before its
// children's, so class_token (a Parameter of VisionTransformer itself) precedes conv_proj, and
// encoder.pos_embedding precedes the layers. nn.MultiheadAttention packs q/k/v into
// in_proj_weight/in_proj_bias. MLPBlock is a torchvision.ops.MLP since torchvision 0.14
// (Linear, GELU, Dropout, Linear, Dropout), so its linears are "mlp.0" and "mlp.3" (the older
// linear_1/linear_2 names survive only as a state_dict upgrade).
std::vector<Param> vit_b16() {
  constexpr std::int64_t kImage = 224, kPatch = 16, kHidden = 768, kLayers = 12, kMlp = 3072, kClasses = 1000;
  constexpr std::int64_t kSeq = (kImage / kPatch) * (kImage / kPatch) + 1;  // patches + class token
  Params p;
  p.add("class_token", {1, 1, kHidden});
  p.conv2d("conv_proj", 3, kHidden, kPatch, true);
  p.add("encoder.pos_embedding", {1, kSeq, kHidden});
  for (int l = 0; l < kLayers; ++l) {
    const std::string m = at("encoder.layers.encoder_layer_", l);
    p.norm(m + ".ln_1", kHidden);
    p.add(m + ".self_attention.in_proj_weight", {3 * kHidden, kHidden});
    p.add(m + ".self_attention.in_proj_bias", {3 * kHidden});
    p.linear(m + ".self_attention.out_proj", kHidden, kHidden);
    p.norm(m + ".ln_2", kHidden);
    p.linear(m + ".mlp.0", kHidden, kMlp);
    p.linear(m + ".mlp.3", kMlp, kHidden);
  }
  p.norm("encoder.ln", kHidden);
  p.linear("heads.head", kHidden, kClasses);
  return p.take();
}

// HF LlamaForCausalLM, Llama-2-7b: no biases, RMSNorm weights only, 32 KV heads (no GQA at 7B),
// lm_head not tied to embed_tokens. Rotary embeddings are buffers.
std::vector<Param> llama2_7b() {
  constexpr std::int64_t kVocab = 32000, kHidden = 4096, kLayers = 32, kHeads = 32, kKvHeads = 32, kInter = 11008;
  constexpr std::int64_t kKv = kKvHeads * (kHidden / kHeads);
  Params p;
  p.embedding("model.embed_tokens", kVocab, kHidden);
  for (int l = 0; l < kLayers; ++l) {
    const std::string m = at("model.layers.", l);
    p.linear(m + ".self_attn.q_proj", kHidden, kHidden, false);
    p.linear(m + ".self_attn.k_proj", kHidden, kKv, false);
    p.linear(m + ".self_attn.v_proj", kHidden, kKv, false);
    p.linear(m + ".self_attn.o_proj", kHidden, kHidden, false);
    p.linear(m + ".mlp.gate_proj", kHidden, kInter, false);
    p.linear(m + ".mlp.up_proj", kHidden, kInter, false);
    p.linear(m + ".mlp.down_proj", kInter, kHidden, false);
    p.norm(m + ".input_layernorm", kHidden, false);
    p.norm(m + ".post_attention_layernorm", kHidden, false);
  }
  p.norm("model.norm", kHidden, false);
  p.linear("lm_head", kHidden, kVocab, false);
  return p.take();
}

struct Builtin {
  std::string_view name;
  std::vector<Param> (*make)();
};

constexpr Builtin kBuiltins[] = {
    {"linear", linear}, {"resnet50", resnet50}, {"bert-base", bert_base},
    {"gpt2", gpt2},     {"vit-b16", vit_b16},   {"llama2-7b", llama2_7b},
};

[[noreturn]] void unknown_model(std::string_view name) {
  std::string names;
  for (const Builtin& b : kBuiltins) names += (names.empty() ? "" : ", ") + std::string(b.name);
  throw UsageError("unknown model '" + std::string(name) + "' (" + names + "); or a model file (.json/.yaml)");
}

// ---- model files ---------------------------------------------------------------------------

enum class Format { json, yaml };

std::optional<Format> format_of(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".json") return Format::json;
  if (ext == ".yaml" || ext == ".yml") return Format::yaml;
  return std::nullopt;
}

constexpr const char* kModelAccepted =
    "accepted: {\"name\": ..., \"params\": [{\"name\": \"fc.weight\", \"shape\": [1000, 2048], \"dtype\": "
    "\"float32\"}, "
    "...]} in JSON or YAML";

// Builds the model from either syntax, checking what both share; `where` is "params[3]" or
// "line 7: params[3]", so every message names the file and, when known, the line.
class Loader {
 public:
  explicit Loader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw UsageError("model file " + path_ + ": " + (where.empty() ? "" : where + ": ") + what);
  }

  // "float32", "bf16", "torch.bfloat16"...: floating types only, as gradients are.
  DType dtype(const std::string& where, const std::string& text) const {
    std::string_view s = text;
    if (s.starts_with("torch.")) s.remove_prefix(6);
    const std::optional<DType> t = parse_dtype(s);
    if (!t || !(*t == DType::float16 || *t == DType::bfloat16 || *t == DType::float32 || *t == DType::float64))
      fail(where, "unknown dtype '" + text + "'; accepted: float32, float16, bfloat16, float64 (or torch.float32...)");
    return *t;
  }

  // Accepts a dim parsed by either syntax; nullopt when it was not an integer at all.
  std::int64_t dim(const std::string& where, std::optional<std::int64_t> d, const std::string& text) const {
    if (!d) fail(where, "shape dim '" + text + "' is not a whole number");
    if (*d < 0) fail(where, "shape dim " + text + " is negative");
    return *d;
  }

  void add(const std::string& where, Param p) {
    std::int64_t n = 1;
    for (std::int64_t d : p.shape) {
      if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d)
        fail(where, "'" + p.name + "' has too many elements");
      n *= d;
    }
    const auto [it, fresh] = seen_.emplace(p.name, params_.size());
    if (!fresh) fail(where, "duplicate name '" + p.name + "' (params[" + std::to_string(it->second) + "])");
    params_.push_back(std::move(p));
  }

  Model finish(std::string name) const {
    if (params_.empty()) fail("", "'params' is empty; " + std::string(kModelAccepted));
    if (name.empty()) name = std::filesystem::path(path_).stem().string();
    return Model{std::move(name), "file:" + path_, params_};
  }

 private:
  std::string path_;
  std::vector<Param> params_;
  std::unordered_map<std::string, std::size_t> seen_;
};

Model from_json(const std::string& text, Loader& ld) {
  using nlohmann::json;
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    ld.fail("line " + std::to_string(line_of_byte(text, e.byte)), json_parse_reason(e.what()));
  }
  if (!root.is_object()) ld.fail("", std::string("not a JSON object; ") + kModelAccepted);
  std::string name;
  for (const auto& [key, v] : root.items()) {
    if (key == "name") {
      if (!v.is_string()) ld.fail("", "'name' is not a string");
      name = v.get<std::string>();
    } else if (key != "params") {
      ld.fail("", "unknown key '" + key + "'; accepted: name, params");
    }
  }
  if (!root.contains("params")) ld.fail("", std::string("missing 'params'; ") + kModelAccepted);
  const json& params = root["params"];
  if (!params.is_array()) ld.fail("", std::string("'params' is not a list; ") + kModelAccepted);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const json& jp = params[i];
    const std::string where = "params[" + std::to_string(i) + "]";
    if (!jp.is_object()) ld.fail(where, "not an object with name, shape, dtype");
    Param p;
    bool has_shape = false;
    for (const auto& [key, v] : jp.items()) {
      if (key == "name") {
        if (!v.is_string()) ld.fail(where, "'name' is not a string");
        p.name = v.get<std::string>();
      } else if (key == "shape") {
        if (!v.is_array()) ld.fail(where, "'shape' is not a list of dims");
        has_shape = true;
        for (const json& d : v) {
          std::optional<std::int64_t> n;
          if (d.is_number_unsigned() && d.get<std::uint64_t>() <= std::numeric_limits<std::int64_t>::max())
            n = d.get<std::int64_t>();
          else if (d.is_number_integer() && !d.is_number_unsigned())
            n = d.get<std::int64_t>();
          p.shape.push_back(ld.dim(where, n, d.dump()));
        }
      } else if (key == "dtype") {
        if (!v.is_string()) ld.fail(where, "'dtype' is not a string");
        p.dtype = ld.dtype(where, v.get<std::string>());
      } else {
        ld.fail(where, "unknown key '" + key + "'; accepted: name, shape, dtype");
      }
    }
    if (p.name.empty()) ld.fail(where, "missing 'name'");
    if (!has_shape) ld.fail(where, "'" + p.name + "' has no 'shape'");
    ld.add(where, std::move(p));
  }
  return ld.finish(name);
}

std::string yaml_line(const YAML::Mark& m) { return m.line >= 0 ? "line " + std::to_string(m.line + 1) : ""; }

std::optional<std::int64_t> parse_int(const std::string& s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string yaml_scalar(const Loader& ld, const std::string& where, const YAML::Node& v, const char* key) {
  if (!v.IsScalar()) ld.fail(where, std::string("'") + key + "' is not a plain value");
  return v.Scalar();
}

Model from_yaml_root(const YAML::Node& root, Loader& ld) {
  if (!root.IsMap()) ld.fail(yaml_line(root.Mark()), std::string("not a YAML mapping; ") + kModelAccepted);
  std::string name;
  std::optional<YAML::Node> params;
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (key == "name")
      name = yaml_scalar(ld, yaml_line(kv.second.Mark()), kv.second, "name");
    else if (key == "params")
      params = kv.second;
    else
      ld.fail(yaml_line(kv.first.Mark()), "unknown key '" + key + "'; accepted: name, params");
  }
  if (!params) ld.fail("", std::string("missing 'params'; ") + kModelAccepted);
  if (params->IsNull() || (params->IsSequence() && params->size() == 0))
    ld.fail(yaml_line(params->Mark()), std::string("'params' is empty; ") + kModelAccepted);
  if (!params->IsSequence())
    ld.fail(yaml_line(params->Mark()), std::string("'params' is not a list; ") + kModelAccepted);
  std::size_t i = 0;
  for (const YAML::Node& yp : *params) {
    const std::string where = yaml_line(yp.Mark()) + ": params[" + std::to_string(i++) + "]";
    if (!yp.IsMap()) ld.fail(where, "not a mapping with name, shape, dtype");
    Param p;
    bool has_shape = false;
    for (const auto& kv : yp) {
      const std::string key = kv.first.Scalar();
      const YAML::Node& v = kv.second;
      if (key == "name") {
        p.name = yaml_scalar(ld, where, v, "name");
      } else if (key == "shape") {
        if (!v.IsSequence()) ld.fail(where, "'shape' is not a list of dims");
        has_shape = true;
        for (const YAML::Node& d : v) {
          const std::string s = d.IsScalar() ? d.Scalar() : "<not a value>";
          p.shape.push_back(ld.dim(where, d.IsScalar() ? parse_int(s) : std::nullopt, s));
        }
      } else if (key == "dtype") {
        p.dtype = ld.dtype(where, yaml_scalar(ld, where, v, "dtype"));
      } else {
        ld.fail(where, "unknown key '" + key + "'; accepted: name, shape, dtype");
      }
    }
    if (p.name.empty()) ld.fail(where, "missing 'name'");
    if (!has_shape) ld.fail(where, "'" + p.name + "' has no 'shape'");
    ld.add(where, std::move(p));
  }
  return ld.finish(name);
}

Model from_yaml(const std::string& text, Loader& ld) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    ld.fail(yaml_line(e.mark), "YAML syntax error: " + e.msg);
  }
  if (root.IsNull()) ld.fail("", std::string("the file is empty; ") + kModelAccepted);
  try {
    return from_yaml_root(root, ld);
  } catch (const YAML::Exception& e) {  // a conversion yaml-cpp refuses
    ld.fail(yaml_line(e.mark), e.msg);
  }
}

}  // namespace

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> out;
  for (const Builtin& b : kBuiltins) out.emplace_back(b.name);
  return out;
}

Model builtin_model(std::string_view name) {
  for (const Builtin& b : kBuiltins)
    if (b.name == name) return Model{std::string(name), "builtin", b.make()};
  unknown_model(name);
}

Model parse_model_text(const std::string& text, const std::string& path) {
  Loader ld(path);
  const std::optional<Format> f = format_of(path);
  if (!f) ld.fail("", "unknown extension; accepted: .json, .yaml, .yml");
  return *f == Format::json ? from_json(text, ld) : from_yaml(text, ld);
}

Model load_model_file(const std::string& path) {
  const Loader ld(path);
  if (!format_of(path)) ld.fail("", "unknown extension; accepted: .json, .yaml, .yml");
  return parse_model_text(read_text_file(path, "model file"), path);
}

Model resolve_model(const std::string& name_or_path) {
  for (const Builtin& b : kBuiltins)
    if (b.name == name_or_path) return builtin_model(name_or_path);
  if (format_of(name_or_path)) return load_model_file(name_or_path);
  unknown_model(name_or_path);
}

}  // namespace collbench::workload
