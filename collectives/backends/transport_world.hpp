#pragma once
// A World over any Transport of its own (not the measured one): the control plane of backends
// whose ranks are not MPI processes (the thread backend's; a Gloo backend's could be). Simple
// linear algorithms — the harness's exchanges are a few small messages between points.
#include <chrono>
#include <memory>
#include <string>

#include "collectives/backends/world.hpp"
#include "collectives/transport/transport.hpp"

namespace collbench {

// The timeout of a control transport's CallScope. The control plane's own waits are bounded by
// the harness (its ControlCall and the watchdog), as MPI's are: the control transport itself
// never times out first.
inline constexpr std::chrono::hours kControlTransportTimeout{24};

class TransportWorld : public World {
 public:
  // `t` carries only control traffic and outlives this World.
  explicit TransportWorld(Transport& t) : t_(t) {}

  int rank() const override { return t_.rank(); }
  int size() const override { return t_.size(); }
  void barrier() override { t_.barrier(); }
  void allreduce(std::span<double> values, Reduce op) override;
  void allreduce(std::span<std::int64_t> values, Reduce op) override;
  void broadcast(std::span<std::byte> bytes, int root) override;
  void allgather(std::span<const std::byte> mine, std::span<std::byte> all) override;
  void send(std::span<const std::byte> bytes, int peer, int tag) override;
  void recv(std::span<std::byte> bytes, int peer, int tag) override;
  void await_notice(int peer, int tag, std::chrono::microseconds pause) override;
  void notify(int peer, int tag) override;
  // Ranks with the same host name and boot (one kernel: one memory) share a node.
  int node_leader() override;
  std::string host_name() const override;
  const char* describe(Call c) const override;

 protected:
  Transport& transport() { return t_; }

 private:
  template <typename T>
  void reduce_all(std::span<T> values, Reduce op);
  Transport& t_;
};

}  // namespace collbench
