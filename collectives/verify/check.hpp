#pragma once
// Checking one rank's result of a collective against the patterns of pattern.hpp, with the
// expected values computed element by element while checking (no expected array), and
// running an algorithm once on filled buffers to check it. The harness checks the buffers of
// the timed run in place (run_in_place); the tests run algorithms on fresh ones (run_checked).
#include <cstddef>
#include <functional>
#include <string>

#include "collectives/registry.hpp"
#include "collectives/verify/pattern.hpp"

namespace collbench::verify {

struct Check {
  std::size_t wrong = 0;        // elements that differ from the expected value
  std::size_t first_index = 0;  // index (in the checked region) of the first wrong element
  double expected = 0;          // of the first wrong element
  double got = 0;
};
// Checks the region this rank must hold after the op (nothing for non-roots of rooted
// many-to-one ops). `send_buf`/`recv_buf` are the buffers passed to fill(), in `m`: host
// memory is read in place, device memory downloaded one kStagingBytes chunk at a time.
Check check(MemorySpace& m, const Case& c, const void* send_buf, const void* recv_buf);
// The same for host buffers.
Check check(const Case& c, const void* send_buf, const void* recv_buf);

struct Outcome {
  bool skipped = false;
  std::string skip_reason;
  Check check;
};

// Refills `send_buf`/`recv_buf` (buffers in `m`, laid out as arrange() says, already bound to
// the call `run` makes) with c's inputs, runs the call once and checks the result in place.
// A NotSupported from `run` is a skip. Allocates nothing but the staging chunk of device
// memory.
Outcome run_in_place(MemorySpace& m, const Case& c, void* send_buf, void* recv_buf, const std::function<void()>& run);

// Runs `entry` once on fresh buffers in t.memory() (or in `buffers`, e.g. registered peer
// memory: a space of the same kind) and checks this rank's result (the tests). c.rank/c.world
// must match the transport. `prepared_calls` > 0: through the entry's bound call instead
// (AlgoEntry::prepare, which it must have), bound once and run that many times on the same
// buffers, refilled and checked each time, as the timed loop reuses it.
Outcome run_checked(Transport& t, const AlgoEntry& entry, const Case& c, std::size_t segment_bytes = 0,
                    const ReduceOp* reduce_override = nullptr, MemorySpace* buffers = nullptr, int prepared_calls = 0);

}  // namespace collbench::verify
