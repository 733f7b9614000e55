#pragma once
// A copy whose stores bypass the caches (non-temporal stores): a zero-copy call's final copies
// into the caller's recv, where the output is larger than the caches keep anyway. A plain store
// first reads the line it writes (read for ownership) and later writes it back; a streaming
// store only writes it. Whether that pays depends on the machine (docs/zero-copy.md: streaming
// stores), so schedules::peer::measure_streaming measures it once per run.
#include <cstddef>

namespace collbench {

// dst[0, bytes) = src[0, bytes), the whole 64-byte lines of dst by streaming stores (AVX2 where
// the CPU has it, else SSE2), the ends by memcpy, and every store done before any later one
// (sfence): a flag raised after it publishes the data. A memcpy where the CPU is not x86-64;
// a no-op when dst == src. The buffers must not overlap otherwise.
void stream_copy(void* dst, const void* src, std::size_t bytes) noexcept;

}  // namespace collbench
