#pragma once
// Element types collbench moves and reduces, with their names and sizes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collectives/core/half.hpp"

namespace collbench {

enum class DType : std::uint8_t { int8, uint8, int32, int64, float16, bfloat16, float32, float64 };

inline constexpr std::array<DType, 8> kAllDTypes = {DType::int8,    DType::uint8,    DType::int32,
                                                     DType::int64,   DType::float16,  DType::bfloat16,
                                                     DType::float32, DType::float64};

constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::int8:
    case DType::uint8: return 1;
    case DType::float16:
    case DType::bfloat16: return 2;
    case DType::int32:
    case DType::float32: return 4;
    case DType::int64:
    case DType::float64: return 8;
  }
  return 0;
}

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::int8: return "int8";
    case DType::uint8: return "uint8";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::float32: return "float32";
    case DType::float64: return "float64";
  }
  return "?";
}

// Accepts the canonical names and the nccl-tests spellings (float, half, bf16, double...).
std::optional<DType> parse_dtype(std::string_view name);
// "int8, uint8, ..." for error messages and --help.
std::string dtype_names();

// Maps a DType to its C++ storage type at compile time; `visit_dtype(t, f)` calls
// `f(Tag<T>{})` with the matching type so type-erased code can enter templates once.
template <class T>
struct Tag {
  using type = T;
};

template <class F>
constexpr decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::int8: return f(Tag<std::int8_t>{});
    case DType::uint8: return f(Tag<std::uint8_t>{});
    case DType::int32: return f(Tag<std::int32_t>{});
    case DType::int64: return f(Tag<std::int64_t>{});
    case DType::float16: return f(Tag<float16>{});
    case DType::bfloat16: return f(Tag<bfloat16>{});
    case DType::float32: return f(Tag<float>{});
    case DType::float64: return f(Tag<double>{});
  }
  return f(Tag<std::uint8_t>{});  // unreachable: every enumerator is handled above
}

}  // namespace collbench
