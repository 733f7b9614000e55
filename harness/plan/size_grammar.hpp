#pragma once
// The size grammar of -b/-e and every size in a sweep file ("8", "64K", "16M", "1.5M", "1GiB"),
// header-only and without the rest of collbench: the harness (sizes.cpp, which turns an error
// into a UsageError) and the plain-MPI reference (bench/raw_mpi.cpp, which links no collbench
// code) read sizes with this one function.
#include <cctype>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace collbench::size_grammar {

inline constexpr const char* kAccepted =
    "a whole number of bytes with an optional K, M, G or T suffix (powers of 1024; KiB/KB, MiB/MB... too), "
    "e.g. 8, 64K, 16M, 1G, 1.5M";

struct Parsed {
  std::uint64_t bytes = 0;
  std::string error;  // why `text` is not a size ("" when it is one)
};

// Scale of a suffix ("", "B", "K", "KB", "KiB", ...), or 0 when unknown.
inline std::uint64_t suffix_scale(std::string_view s) {
  if (s.empty() || s == "B" || s == "b") return 1;
  const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  const std::string_view rest = s.substr(1);
  if (!(rest.empty() || rest == "B" || rest == "b" || rest == "iB" || rest == "ib")) return 0;
  switch (u) {
    case 'K': return 1ull << 10;
    case 'M': return 1ull << 20;
    case 'G': return 1ull << 30;
    case 'T': return 1ull << 40;
    default: return 0;
  }
}

inline Parsed parse(std::string_view text) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  constexpr int kMaxDecimals = 9;
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto bad = [](const std::string& why) { return Parsed{0, why}; };
  if (text.empty()) return bad("empty");
  if (text[0] == '-') return bad("negative");
  std::size_t i = 0;
  unsigned __int128 whole = 0;
  for (; i < text.size() && digit(text[i]); ++i) {
    whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
    if (whole > kMax) return bad("too large for 64 bits");
  }
  if (i == 0) return bad("no digits");
  std::uint64_t frac = 0, frac_scale = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    const std::size_t start = i;
    for (; i < text.size() && digit(text[i]); ++i) {
      if (i - start >= kMaxDecimals) return bad("too many decimals");
      frac = frac * 10 + static_cast<unsigned>(text[i] - '0');
      frac_scale *= 10;
    }
    if (i == start) return bad("no digits after the decimal point");
  }
  const std::string_view suffix = text.substr(i);
  const std::uint64_t scale = suffix_scale(suffix);
  if (scale == 0) return bad("unknown suffix '" + std::string(suffix) + "'");
  const unsigned __int128 frac_bytes = static_cast<unsigned __int128>(frac) * scale;
  if (frac_bytes % frac_scale != 0) return bad("not a whole number of bytes");
  const unsigned __int128 total = whole * scale + frac_bytes / frac_scale;
  if (total > kMax) return bad("too large for 64 bits");
  return {static_cast<std::uint64_t>(total), ""};
}

}  // namespace collbench::size_grammar
