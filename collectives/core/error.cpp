#include "collectives/core/error.hpp"

namespace collbench {

std::string ErrorContext::describe() const {
  std::string s;
  auto add = [&s](const std::string& kv) {
    if (!s.empty()) s += ' ';
    s += kv;
  };
  if (!call.op.empty()) add("op=" + call.op);
  if (!call.algo.empty()) add("algo=" + call.algo);
  if (call.point_bytes) add("size=" + std::to_string(call.point_bytes));
  if (!call.phase.empty()) add("phase=" + call.phase);
  if (call.iteration >= 0) add("iteration=" + std::to_string(call.iteration));
  if (rank >= 0) add("rank=" + std::to_string(rank));
  if (peer >= 0) add("peer=" + std::to_string(peer));
  if (tag >= 0) add("tag=" + std::to_string(tag));
  if (bytes) add("bytes=" + std::to_string(bytes));
  if (!split.empty()) add("split=" + split);
  if (world_rank >= 0) add("world_rank=" + std::to_string(world_rank));
  if (world_peer >= 0) add("world_peer=" + std::to_string(world_peer));
  return s;
}

std::string Error::with_context(const std::string& what, const ErrorContext& ctx) {
  const std::string d = ctx.describe();
  return d.empty() ? what : what + " (" + d + ")";
}

std::string UsageError::printable(const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  const auto escape = [&](unsigned char u) {
    out += "\\x";
    out += kHex[u >> 4];
    out += kHex[u & 15];
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    const auto next = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0; };
    // UTF-8 line breaks other than '\n' count too: C1 controls (U+0080..U+009F, NEL among
    // them) and U+2028/U+2029, which log readers and Python's splitlines() break lines at.
    const std::size_t n = u == 0xc2 && next(1) >= 0x80 && next(1) <= 0x9f                        ? 2
                          : u == 0xe2 && next(1) == 0x80 && (next(2) == 0xa8 || next(2) == 0xa9) ? 3
                          : u < 0x20 || u == 0x7f                                                ? 1
                                                                                                 : 0;
    if (n == 0) {
      out += s[i];
      continue;
    }
    for (std::size_t k = 0; k < n; ++k) escape(next(k));
    i += n - 1;
  }
  return out;
}

}  // namespace collbench
