#pragma once
// The one interface every algorithm is written against: non-blocking point-to-point
// messages between ranks, a barrier, and the memory space the buffers live in.
// Implementations: thread/ (ranks as threads in one process), mpi/, nccl/.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/core/error.hpp"
#include "collectives/core/memory.hpp"

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

// What the harness is measuring right now; copied into every error a transport raises so a
// timeout says "op=allreduce algo=ring size=1048576 iteration=3 rank=1 peer=2".
struct CallContext {
  std::string op;
  std::string algo;
  std::size_t point_bytes = 0;
  long iteration = -1;
  std::string phase;
};

class Transport {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~Transport() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string_view backend() const = 0;  // "thread", "mpi", "nccl"
  virtual MemorySpace& memory() = 0;

  // Start a transfer. Buffers must stay valid until the request completes. Tags in
  // [0, kMaxTag] keep algorithm phases apart. Work queued on memory() before an isend
  // (copy, reduce) is visible to that send: device transports order it on their stream.
  virtual Request isend(const void* buf, std::size_t bytes, int peer, int tag) = 0;
  virtual Request irecv(void* buf, std::size_t bytes, int peer, int tag) = 0;
  // Complete requests; throw TimeoutError (naming the peer) after timeout().
  virtual void wait(Request& r) = 0;
  virtual void wait_all(std::span<Request> rs);  // default: wait each in order
  virtual void barrier() = 0;

  static constexpr int kMaxTag = 32767;  // MPI guarantees at least this tag upper bound

  // Blocking helpers built on the above.
  void send(const void* buf, std::size_t bytes, int peer, int tag);
  void recv(void* buf, std::size_t bytes, int peer, int tag);
  // Send to `to` and receive from `from` at once (both directions in flight).
  void sendrecv(const void* sbuf, std::size_t sbytes, int to, void* rbuf, std::size_t rbytes, int from, int tag);

  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }
  const CallContext& context() const { return context_; }
  void set_context(CallContext c) { context_ = std::move(c); }
  // The per-iteration update: cheaper than set_context (no string copies).
  void set_iteration(long i) { context_.iteration = i; }

  // An ErrorContext for a request (or none), with the current call context.
  ErrorContext error_context(const Request* r = nullptr) const;

 protected:
  void check_peer(int peer, const char* what) const;
  void check_tag(int tag) const;

 private:
  std::chrono::milliseconds timeout_{std::chrono::seconds(60)};
  CallContext context_;
};

}  // namespace collbench
