// libFuzzer target: the YAML sweep-file loader on arbitrary text must return a SweepFile or
// throw UsageError ("FILE:LINE:COL: ...; accepted: ..."). Any other exception escapes and is
// reported by libFuzzer as a crash, like a real crash or UB.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "collectives/core/error.hpp"
#include "harness/plan/config.hpp"
#include "harness/plan/settings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const collbench::SweepFile f = collbench::parse_sweep_yaml(text, "fuzz.yaml");
    // What was accepted must be self-consistent: every case passes the cross-field checks.
    for (const auto& c : f.cases) collbench::validate_settings(c.settings);
  } catch (const collbench::UsageError& e) {
    const std::string what = e.what();
    // One complete line that says what is valid.
    if (what.find("; accepted: ") == std::string::npos || what.find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
