// The Gloo transport's contract, on real TCP sockets between threads: messages by peer and
// tag (out of order across tags), bursts, the barrier, split() (the shared split contract),
// the library's own contexts, and errors that name the peer: a timeout, a peer that is gone.
#include <gtest/gtest.h>

#include <array>
#include <numeric>

#include "collectives/backends/transport_world.hpp"
#include "gloo_threads.hpp"
#include "transport/split_checks.hpp"

namespace collbench {
namespace {

using testing::run_gloo_ranks;

TEST(GlooTransport, MessagesMatchByPeerAndTag) {
  for (int n : {1, 2, 3, 5}) {
    run_gloo_ranks(n, [n](GlooTransport& t) {
      EXPECT_EQ(t.size(), n);
      EXPECT_EQ(t.backend(), "gloo");
      if (n == 1) return;
      const int right = (t.rank() + 1) % n, left = (t.rank() + n - 1) % n;
      // Two tags posted in one order, received in the other.
      std::vector<int> a(1000), b(7), ra(1000, -1), rb(7, -1);
      std::iota(a.begin(), a.end(), 100 * t.rank());
      std::iota(b.begin(), b.end(), 1000 * t.rank());
      Request rs[4] = {t.irecv(rb.data(), rb.size() * sizeof(int), left, 9), t.irecv(ra.data(), ra.size() * sizeof(int), left, 8),
                       t.isend(a.data(), a.size() * sizeof(int), right, 8), t.isend(b.data(), b.size() * sizeof(int), right, 9)};
      t.wait_all(rs);
      EXPECT_EQ(ra[0], 100 * left);
      EXPECT_EQ(ra[999], 100 * left + 999);
      EXPECT_EQ(rb[6], 1000 * left + 6);
      t.barrier();
    });
  }
}

TEST(GlooTransport, ZeroBytesAndBursts) {
  run_gloo_ranks(2, [](GlooTransport& t) {
    const int peer = 1 - t.rank();
    t.sendrecv(nullptr, 0, peer, nullptr, 0, peer, 3);  // a zero-byte message still matches
    std::vector<Request> out(16);
    std::vector<char> slots(4 * 64);
    char msg[64] = {static_cast<char>('a' + t.rank())};
    if (t.rank() == 0) t.isend_burst(msg, sizeof msg, peer, 4, out);
    else t.irecv_burst(slots.data(), 64, 64, 4, peer, 4, out);
    t.wait_all(out);
    if (t.rank() == 1) {
      EXPECT_EQ(slots[0], 'a');
    }
  });
}

TEST(GlooTransport, SplitContract) {
  for (int n : {1, 2, 3, 4, 5}) run_gloo_ranks(n, [](GlooTransport& t) { testing::check_split_contract(t); });
}

TEST(GlooTransport, LibraryContextsAreTheirOwn) {
  run_gloo_ranks(3, [](GlooTransport& t) {
    auto& a = t.library_context(0);
    auto& b = t.library_context(1);
    EXPECT_NE(a.get(), b.get());
    EXPECT_EQ(a.get(), t.library_context(0).get());  // made once
    EXPECT_NE(a.get(), &t.context());
  });
}

// The control plane ranks started without MPI get (GlooWorld is a TransportWorld over a Gloo
// transport): what the harness and the NCCL backend ask of it — NCCL's unique id (128 bytes)
// broadcast from rank 0, an allgather, reductions, the node leader.
TEST(GlooTransport, CarriesAControlPlane) {
  for (int n : {1, 2, 3}) {
    run_gloo_ranks(n, [n](GlooTransport& t) {
      TransportWorld w(t);
      std::array<std::byte, 128> id{};
      if (w.rank() == 0)
        for (std::size_t i = 0; i < id.size(); ++i) id[i] = std::byte(i * 7 + 1);
      w.broadcast(id, 0);
      for (std::size_t i = 0; i < id.size(); ++i) ASSERT_EQ(id[i], std::byte(i * 7 + 1)) << "byte " << i;
      const std::int64_t mine = 10 + w.rank();
      std::vector<std::int64_t> all(static_cast<std::size_t>(n));
      w.allgather(std::as_bytes(std::span(&mine, 1)), std::as_writable_bytes(std::span(all)));
      for (int r = 0; r < n; ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], 10 + r);
      std::array<double, 1> v{static_cast<double>(w.rank())};
      w.allreduce(v, World::Reduce::max);
      EXPECT_EQ(v[0], n - 1);
      EXPECT_EQ(w.node_leader(), 0);  // one host
      w.barrier();
    });
  }
}

TEST(GlooTransport, TimeoutNamesThePeer) {
  try {
    run_gloo_ranks(
        2,
        [](GlooTransport& t) {
          int x = 0;
          if (t.rank() == 0) {
            Request r = t.irecv(&x, sizeof x, 1, 11);  // rank 1 never sends
            t.wait(r);
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(600));
        },
        std::chrono::milliseconds(300), /*end_barrier=*/false);
    FAIL() << "no timeout";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("peer 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace collbench
