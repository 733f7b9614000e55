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
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out += c;
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[u >> 4];
    out += kHex[u & 15];
  }
  return out;
}

}  // namespace collbench
