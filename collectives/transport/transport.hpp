#pragma once
// The one interface every algorithm is written against: non-blocking point-to-point
// messages between ranks, a barrier, the memory space the buffers live in, and sub-transports
// over subsets of ranks (split). It moves data and nothing else: what is being measured and
// the deadline live in the CallScope (call_scope.hpp) the harness owns and errors read.
// Implementations: thread/ (ranks as threads in one process), mpi/, nccl/; wrappers derive
// from ForwardingTransport (forwarding_transport.hpp).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/core/error.hpp"
#include "collectives/core/memory.hpp"
#include "collectives/patterns/node_layout.hpp"
#include "collectives/transport/call_scope.hpp"
#include "collectives/transport/peer_memory.hpp"

namespace collbench {

// A pending isend/irecv. Plain value; `handle` belongs to the transport that made it.
struct Request {
  std::uintptr_t handle = 0;
  int peer = -1;
  int tag = -1;
  std::size_t bytes = 0;
  bool is_send = false;
  bool active = false;  // false once completed (or never started): wait() is then a no-op
};

class Transport {
 public:
  // Every transport runs under a call scope (what is measured + the timeout). Wrappers and
  // sub-transports pass their inner's/parent's, so one scope covers the whole stack.
  explicit Transport(std::shared_ptr<CallScope> scope = std::make_shared<CallScope>());
  virtual ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string_view backend() const = 0;  // "thread", "mpi", "nccl"
  virtual MemorySpace& memory() = 0;

  // Start a transfer. Buffers must stay valid until the request completes. Tags in
  // [0, kMaxTag] keep algorithm phases apart. Work queued on memory() before an isend
  // (copy, reduce) is visible to that send: device transports order it on their stream.
  virtual Request isend(const void* buf, std::size_t bytes, int peer, int tag) = 0;
  virtual Request irecv(void* buf, std::size_t bytes, int peer, int tag) = 0;
  // Complete requests; throw TimeoutError (naming the peer) after scope().timeout().
  virtual void wait(Request& r) = 0;
  virtual void wait_all(std::span<Request> rs);  // default: wait each in order
  virtual void barrier() = 0;

  static constexpr int kMaxTag = 32767;  // MPI guarantees at least this tag upper bound
  static constexpr int kNoColor = -1;    // split(): this rank joins no sub-transport

  // A sub-transport over the ranks that pass the same color, ordered by (key, rank here),
  // like MPI_Comm_split; nullptr for a negative color. Collective over this transport.
  // Creating one costs milliseconds (a communicator), so it is made once and cached under
  // `name`: later calls with that name return the cached one without communicating. The same
  // name must always mean the same partition (same color and key on every rank; a different
  // color or key for a cached name throws Error). Never call it for a new name inside a
  // timed call. The sub-transport shares this transport's scope and memory space, lives as
  // long as this transport, and its errors name ranks both ways (split_name, world_rank).
  Transport* split(std::string_view name, int color, int key);
  // Whether split(name, ...) has been made (and would not communicate).
  bool has_split(std::string_view name) const;
  // For sub-transports: the name they were split under ("" for a root transport) and the
  // rank of one of their ranks in the root transport (identity for a root transport).
  virtual std::string_view split_name() const { return {}; }
  virtual int world_rank(int rank) const { return rank; }

  // Blocking helpers: isend/irecv + wait, unless a transport has a cheaper blocking call
  // (MPI_Send/MPI_Recv while watched).
  virtual void send(const void* buf, std::size_t bytes, int peer, int tag);
  virtual void recv(void* buf, std::size_t bytes, int peer, int tag);
  // A burst to or from one peer, as osu_bw's window: out.size() isends of one buffer, or
  // out.size() irecvs, the i-th into first + (i % slots) * stride. One call per burst, so a
  // transport whose messages post inline (MPI) posts them without a virtual call each; a
  // wrapper (faults, staging) inherits the loop over its own isend/irecv, and sees each message.
  virtual void isend_burst(const void* buf, std::size_t bytes, int peer, int tag, std::span<Request> out);
  virtual void irecv_burst(void* first, std::size_t bytes, std::size_t stride, std::size_t slots, int peer, int tag,
                           std::span<Request> out);
  // Send to `to` and receive from `from` at once (both directions in flight).
  void sendrecv(const void* sbuf, std::size_t sbytes, int to, void* rbuf, std::size_t rbytes, int from, int tag);

  // Which node each rank of this transport runs on (patterns/node_layout.hpp), for node-aware
  // algorithms. A root transport's is set once, before any split, by whoever knows the
  // placement (the harness from its topology discovery, tests); until then every rank counts
  // as one node. A sub-transport's follows from its root's (through world_rank).
  virtual void set_node_layout(const std::vector<int>& node_of_rank);
  virtual const patterns::NodeLayout& node_layout() const;

  // Memory every rank of this transport can load from and store to (peer_memory.hpp), or
  // nullptr when the ranks do not all share a node or the backend has none. Collective on the
  // first call (cached after): call it first outside timed calls, as split().
  virtual PeerMemory* peer_memory();

  CallScope& scope() const { return *scope_; }
  const std::shared_ptr<CallScope>& shared_scope() const { return scope_; }

  // An ErrorContext for a request (or none): the scope's call, this rank, the request, and in
  // a sub-transport its name and the world ranks.
  ErrorContext error_context(const Request* r = nullptr) const;

 protected:
  // The uncached split behind split(): collective, called once per name.
  virtual std::unique_ptr<Transport> make_split(std::string_view name, int color, int key) = 0;
  // The uncached peer memory behind peer_memory(): collective, called once; nullptr: none.
  virtual std::unique_ptr<PeerMemory> make_peer_memory() { return nullptr; }
  // Destroys the cached sub-transports and peer memory now. A transport whose sub-transports use its own
  // members (a staging pool, a communicator) calls this first in its destructor, because the
  // cache, held here in the base, would otherwise outlive them.
  void release_splits() noexcept;

  void check_peer(int peer, const char* what) const;
  void check_tag(int tag) const;

 private:
  struct CachedSplit {
    std::string name;
    int color;
    int key;
    std::unique_ptr<Transport> transport;  // null: this rank is in no group of that split
  };
  std::shared_ptr<CallScope> scope_;
  std::vector<CachedSplit> splits_;
  std::unique_ptr<PeerMemory> peer_memory_;
  bool peer_memory_made_ = false;
  std::shared_ptr<const std::vector<int>> root_nodes_;  // root rank -> node label; null: one node
  mutable std::optional<patterns::NodeLayout> layout_;  // this transport's, made on first use
};

// The members of one group of a split, from every rank's (color, key) in rank order: the ranks
// with `color`, ordered by (key, rank). Shared by the transports that exchange colors themselves.
std::vector<int> split_members(std::span<const int> colors, std::span<const int> keys, int color);

}  // namespace collbench
