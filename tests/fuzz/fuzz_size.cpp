// libFuzzer target: parse_size on arbitrary text must return a size or throw UsageError.
// Anything else (another exception, a crash, UB under -fsanitize=undefined) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "collectives/core/error.hpp"
#include "harness/plan/sizes.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const std::uint64_t bytes = collbench::parse_size(text);
    // Round trip: what format_size prints parses back to the same value.
    if (collbench::parse_size(collbench::format_size(bytes)) != bytes) std::abort();
  } catch (const collbench::UsageError&) {
  }
  return 0;
}
