#pragma once
// The point-to-point methods of `--op pingpong` (selected by --algo), after the OSU
// micro-benchmarks. Every method reports time_us per message and bandwidth = bytes / time:
//   latency  osu_latency: ping-pong; time = half the round trip (one-way latency)
//   bw       osu_bw: src isends a window of kP2pWindow messages back-to-back, dst replies with a
//            4-byte ack once all arrived; time = elapsed / window
//   bibw     osu_bibw: both ranks send a window to each other at once; time = elapsed / (2·window)
//            (2·window messages moved), so bytes / time = 2·bytes·window / elapsed as OSU prints
#include <optional>
#include <span>
#include <string_view>

#include "collectives/op_traits.hpp"

namespace collbench {

enum class P2pMethod { latency, bw, bibw };

inline constexpr int kP2pWindow = 64;  // OSU's default window size

struct P2pMethodInfo {
  P2pMethod method;
  const char* name;
  const char* description;
};

inline constexpr P2pMethodInfo kP2pMethods[] = {
    {P2pMethod::latency, "latency", "osu_latency: ping-pong, time = half the round trip (one-way)"},
    {P2pMethod::bw, "bw", "osu_bw: window of 64 isends, then a 4-byte ack; time = elapsed/64 per message"},
    {P2pMethod::bibw, "bibw", "osu_bibw: windows of 64 both ways at once; time = elapsed/128 per message"},
};

inline constexpr std::string_view kPingpongOp = kP2pOpTraits[0].name;

constexpr const char* p2p_method_name(P2pMethod m) {
  for (const auto& i : kP2pMethods)
    if (i.method == m) return i.name;
  return "?";
}

constexpr std::optional<P2pMethod> parse_p2p_method(std::string_view name) {
  for (const auto& i : kP2pMethods)
    if (name == i.name) return i.method;
  return std::nullopt;
}

// Messages one timed sample moves (time_us = elapsed / this).
constexpr int p2p_messages_per_sample(P2pMethod m) {
  return m == P2pMethod::latency ? 2 : m == P2pMethod::bw ? kP2pWindow : 2 * kP2pWindow;
}

}  // namespace collbench
