#include "collectives/core/dtype.hpp"

namespace collbench {

std::optional<DType> parse_dtype(std::string_view n) {
  for (DType t : kAllDTypes)
    if (n == dtype_name(t)) return t;
  struct Alias {
    std::string_view name;
    DType type;
  };
  static constexpr Alias kAliases[] = {
      {"char", DType::int8},     {"int", DType::int32},     {"long", DType::int64},
      {"half", DType::float16},  {"fp16", DType::float16},  {"bf16", DType::bfloat16},
      {"float", DType::float32}, {"fp32", DType::float32},  {"double", DType::float64},
      {"fp64", DType::float64},
  };
  for (const auto& a : kAliases)
    if (n == a.name) return a.type;
  return std::nullopt;
}

std::string dtype_names() {
  std::string s;
  for (DType t : kAllDTypes) {
    if (!s.empty()) s += ", ";
    s += dtype_name(t);
  }
  return s;
}

}  // namespace collbench
