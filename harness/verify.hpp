#pragma once
// Exactly predictable inputs and the expected result of every op, so a result can be
// checked element by element. Inputs are small integers in any dtype, chosen per reduce op
// so that sums, products, maxima and minima are exact in every dtype and every reduction
// order (integers wrap like MPI's). See results/README.md ("Verification").
#include <cstddef>

#include "collectives/collective.hpp"

namespace collbench::verify {

// One rank's view of one collective call.
struct Case {
  Op op = Op::allreduce;
  DType dtype = DType::float32;
  RedOp redop = RedOp::sum;
  std::size_t count = 0;  // elements per rank-chunk (CollArgs::count)
  int root = 0;
  int rank = 0;
  int world = 1;
  bool in_place = false;
};

// Where the op reads and writes inside buffers of send_elems / recv_elems elements,
// following the in-place conventions of collective.hpp.
struct Pointers {
  void* send;
  void* recv;
};
Pointers arrange(const Case& c, void* send_buf, void* recv_buf);

// Input element `i` of `rank`'s send data, as the integer it encodes.
long long input_value(const Case& c, int rank, std::size_t i);

// Fills both buffers with a sentinel, then writes this rank's inputs where the op reads them.
// Buffers are host memory of send_elems(op,count,world) and recv_elems(...) elements.
void fill(const Case& c, void* send_buf, void* recv_buf);

struct Check {
  std::size_t wrong = 0;        // elements that differ from the expected value
  std::size_t first_index = 0;  // index (in the checked region) of the first wrong element
  double expected = 0;          // of the first wrong element
  double got = 0;
};
// Checks the region this rank must hold after the op (nothing for non-roots of rooted
// many-to-one ops). `recv_buf`/`send_buf` are the same host buffers passed to fill().
Check check(const Case& c, const void* send_buf, const void* recv_buf);

}  // namespace collbench::verify

#include <string>

#include "collectives/registry.hpp"

namespace collbench::verify {

// Runs `entry` once on fresh inputs in t.memory() and checks this rank's result.
// c.rank/c.world must match the transport. Used by the harness's verification step and by
// the tests, so both check exactly the same thing.
struct Outcome {
  bool skipped = false;
  std::string skip_reason;
  Check check;
};
Outcome run_checked(Transport& t, const AlgoEntry& entry, const Case& c, std::size_t segment_bytes = 0,
                    const ReduceOp* reduce_override = nullptr);

}  // namespace collbench::verify
