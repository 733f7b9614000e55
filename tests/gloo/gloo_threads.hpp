#pragma once
// Gloo ranks as threads of the test process, each with its own TCP device and context on
// 127.0.0.1 (as Gloo's own tests run them): the whole transport and library path, real
// sockets, no launcher. The contexts' addresses are swapped through memory here; the launch
// rendezvous and the World exchange are tested on their own.
#include <barrier>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "collectives/backends/gloo/gloo_mesh.hpp"
#include "collectives/backends/gloo/gloo_transport.hpp"

namespace collbench::testing {

// Runs body(transport) on `n` threads, one rank each; rethrows the first exception. With
// `end_barrier`, no rank closes its sockets while another still talks to it (a test of a rank
// that leaves early passes false).
inline void run_gloo_ranks(int n, const std::function<void(GlooTransport&)>& body,
                           std::chrono::milliseconds timeout = std::chrono::seconds(30), bool end_barrier = true) {
  std::vector<std::vector<char>> slots(static_cast<std::size_t>(n));
  std::barrier sync(n);
  std::mutex mu;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        auto d = gloo_mesh::make_device("127.0.0.1", nullptr);
        auto ctx = gloo_mesh::connect(r, n, d.device,
                                      [&](const std::vector<char>& mine) {
                                        slots[static_cast<std::size_t>(r)] = mine;
                                        sync.arrive_and_wait();
                                        auto all = slots;
                                        sync.arrive_and_wait();
                                        return all;
                                      },
                                      timeout);
        GlooTransport t(std::move(ctx), d.device, std::make_shared<CallScope>(timeout));
        body(t);
        if (end_barrier) t.barrier();
      } catch (...) {
        std::lock_guard lk(mu);
        if (!first) first = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace collbench::testing
