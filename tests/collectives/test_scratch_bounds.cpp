// Memory target of every custom algorithm: the scratch it takes from the caller's Workspace
// is at most the larger of its send and recv buffers, so send + recv + scratch — the peak a
// rank holds for a hot-cache point — stays within 3x the largest buffer. Pipelined
// algorithms must bound scratch by segments, not by the message; the few whose textbook form
// needs a message-sized buffer (butterfly/Rabenseifner tmp, tree gather/scatter subtrees)
// stay within it. Checked at ~1M elements (4 MiB blocks, where a per-message scratch of
// (n-1) x count would show), n = 2, 4 and 5 (powers of two and an odd one; 3, odd like 5,
// and took a fifth of the test's time), both placements and both roots, with the result
// verified, and a second call must not grow the workspace (nothing allocated once warm). Under
// ASan (CI's sanitizer suite) at 64 Ki elements with 16 KiB segments: the same bound on a
// sixteenth of the data, segments scaled with it (a pipeline holds a few segments, so a
// default 256 KiB segment against a 256 KiB message would break the bound by design).
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>

#include "collectives/registry.hpp"
#include "collectives/backends/thread/thread_transport.hpp"
#include "common/cases.hpp"

namespace collbench {
namespace {

// float32: 4 MiB per block, a power of two; under ASan (~3x slower) 256 KiB, where a scratch
// of (n-1) x count still exceeds the bound.
constexpr std::size_t kCount = testing::kSanitizerBuild ? std::size_t{1} << 16 : std::size_t{1} << 20;
// 0: each algorithm's default (256 KiB, a sixteenth of a 4 MiB block); under ASan the same ratio.
constexpr std::size_t kSegmentBytes = testing::kSanitizerBuild ? kCount * 4 / 16 : 0;

class ScratchBound : public ::testing::TestWithParam<testing::AlgoAtWorld> {};

TEST_P(ScratchBound, AtMostTheLargestBufferAndStableOnceWarm) {
  const AlgoEntry* e = GetParam().entry;  // not a structured binding: clang 14 cannot capture one
  const int n = GetParam().world;
  testing::CaseSpace space{{kCount}, {DType::float32}, {RedOp::sum}};
  std::mutex mu;
  std::vector<std::string> failures;
  ThreadWorld w(n);
  w.run([&](ThreadTransport& t) {
    t.scope().set_timeout(std::chrono::seconds(60));
    for (const verify::Case& c : testing::expand(e->op, n, t.rank(), space)) {
      const std::size_t sb = send_elems(c.op, c.count, n) * 4, rb = recv_elems(c.op, c.count, n) * 4;
      const std::size_t bound = std::max(sb, rb);
      std::vector<std::byte> send(sb), recv(rb);
      Workspace ws(t.memory());
      CollArgs a;
      a.count = c.count;
      a.dtype = c.dtype;
      a.op = make_reduce_op(c.redop, c.dtype);
      a.root = c.root;
      a.segment_bytes = kSegmentBytes;
      a.workspace = &ws;
      const verify::Pointers p = verify::arrange(c, send.data(), recv.data());
      a.send = p.send;
      a.recv = p.recv;
      verify::fill(c, send.data(), recv.data());
      e->run(t, a);
      const std::size_t held = ws.bytes_held();
      const verify::Check first = verify::check(c, send.data(), recv.data());
      verify::fill(c, send.data(), recv.data());
      e->run(t, a);
      const verify::Check second = verify::check(c, send.data(), recv.data());
      std::string why;
      if (held > bound) why += " holds " + std::to_string(held) + " B of scratch > " + std::to_string(bound) + " B;";
      if (ws.bytes_held() != held) why += " grew to " + std::to_string(ws.bytes_held()) + " B on the second call;";
      if (first.wrong || second.wrong) why += " " + std::to_string(first.wrong + second.wrong) + " wrong elements;";
      if (!why.empty()) {
        std::lock_guard lk(mu);
        failures.push_back(testing::describe(c) + " rank " + std::to_string(t.rank()) + ":" + why);
      }
    }
  });
  for (const std::string& f : failures) ADD_FAILURE() << e->algo << ": " << f;
}

INSTANTIATE_TEST_SUITE_P(Registry, ScratchBound, ::testing::ValuesIn(testing::host_algorithms_at({2, 4, 5})),
                         testing::algo_at_world_name);

}  // namespace
}  // namespace collbench
