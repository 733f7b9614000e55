#pragma once
// A model as DDP sees it: the list of parameter tensors whose gradients are all-reduced, in
// PyTorch `named_parameters()` order. Built-in models are generated from each architecture's
// published hyper-parameters; any other model comes from a JSON or YAML parameter list.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/core/dtype.hpp"

namespace collbench::workload {

struct Param {
  std::string name;                 // PyTorch-style, e.g. "layer1.0.bn1.bias"
  std::vector<std::int64_t> shape;  // [] is a scalar (one element)
  DType dtype = DType::float32;
  std::int64_t numel() const;
};

struct Model {
  std::string name;
  std::string source;  // "builtin" or "file:PATH"
  std::vector<Param> params;
  std::int64_t count() const;   // elements over all params
  std::uint64_t bytes() const;  // in each param's own dtype
};

// "linear", "resnet50", "bert-base", "gpt2", "vit-b16", "llama2-7b".
std::vector<std::string> builtin_model_names();

// Throws UsageError("unknown model 'x' (linear, resnet50, ...); or a model file (.json/.yaml)").
Model builtin_model(std::string_view name);

// A parameter list, JSON or YAML by the file's extension (.json, .yaml, .yml):
//   {"name": "m", "params": [{"name": "fc.weight", "shape": [1000, 2048], "dtype": "float32"}, ...]}
// dtype is optional (float32) and may be spelled "torch.bfloat16". Throws UsageError naming the
// file (and the line where the parser knows it) on anything else.
Model load_model_file(const std::string& path);
// The same from the file's bytes (`path` names it in messages and picks JSON or YAML).
Model parse_model_text(const std::string& text, const std::string& path);

// A built-in name, else a path ending in .json/.yaml/.yml, else UsageError.
Model resolve_model(const std::string& name_or_path);

}  // namespace collbench::workload
