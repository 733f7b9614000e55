#pragma once
// The control plane a backend gives the harness: who the ranks are, and the few blocking
// exchanges the harness makes among them outside the measured transport (agreements, settings,
// tuning files, clock synchronisation, topology, per-rank facts). Kept apart from the measured
// Transport, so harness traffic can never match an algorithm's messages. The harness builds its
// typed calls (harness/runtime/control.hpp) on these primitives; nothing here is timed.
//
// Implementations: backends/mpi/mpi_world (MPI collectives on a duplicated communicator) and
// backends/transport_world (any Transport: the thread backend's, over a split of its own).
// Errors are TransportError / TimeoutError naming the rank and peer.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace collbench {

class World {
 public:
  enum class Reduce { sum, max, min };
  // What a blocked harness call was doing, for the watchdog's line ("in the harness's
  // MPI_Allreduce (control; ...)"): each World names its calls as its users know them.
  enum class Call { barrier, allreduce, broadcast, allgather, topology, send, recv, notice };

  virtual ~World() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  virtual void barrier() = 0;
  virtual void allreduce(std::span<double> values, Reduce op) = 0;        // result on every rank
  virtual void allreduce(std::span<std::int64_t> values, Reduce op) = 0;  // result on every rank
  virtual void broadcast(std::span<std::byte> bytes, int root) = 0;
  // Every rank's `mine` (the same size on every rank), rank after rank, into `all`.
  virtual void allgather(std::span<const std::byte> mine, std::span<std::byte> all) = 0;
  // Blocking point-to-point among harness ranks; tags are the harness's own (control.hpp).
  virtual void send(std::span<const std::byte> bytes, int peer, int tag) = 0;
  virtual void recv(std::span<std::byte> bytes, int peer, int tag) = 0;
  // Waits for a zero-byte notice from `peer`, sleeping `pause` between polls: a spinning waiter
  // would steal the CPU of ranks that are being measured on an oversubscribed node.
  virtual void await_notice(int peer, int tag, std::chrono::microseconds pause) = 0;
  virtual void notify(int peer, int tag) = 0;

  // Collective: the lowest rank that shares this rank's node (its memory), the node's leader.
  virtual int node_leader() = 0;
  // This rank's host name, as the launcher's tools print it.
  virtual std::string host_name() const = 0;
  // Static text for the watchdog (see Call).
  virtual const char* describe(Call c) const = 0;
};

}  // namespace collbench
