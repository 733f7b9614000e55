#pragma once
// N ranks as threads of one process: the "fake distributed" world of the teaching material.
// Messages match by (source, tag) in FIFO order like MPI; a send completes only when its
// receive is matched (rendezvous), so an algorithm that would deadlock on a real network
// for large messages deadlocks here too, and the timeout names the peer.
//
// split() makes a sub-world over the same threads: its own mailboxes and barrier (so its
// messages never match the parent's or another group's), the same lock and failure
// propagation as the whole world.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/transport/transport.hpp"

namespace collbench {

class ThreadWorld;
struct ThreadGroup;  // the mailboxes and barrier of the world or of one split group
struct ThreadOp;     // one pending send or receive

class ThreadTransport final : public Transport {
 public:
  // Rank `rank` of the whole `world`, under its own call scope by default.
  ThreadTransport(ThreadWorld& world, int rank, std::shared_ptr<CallScope> scope = std::make_shared<CallScope>());
  ~ThreadTransport() override;
  int rank() const override { return rank_; }
  int size() const override;
  std::string_view backend() const override { return "thread"; }
  MemorySpace& memory() override { return *memory_; }
  Request isend(const void* buf, std::size_t bytes, int peer, int tag) override;
  Request irecv(void* buf, std::size_t bytes, int peer, int tag) override;
  void wait(Request& r) override;
  void barrier() override;
  std::string_view split_name() const override { return name_; }
  int world_rank(int rank) const override;
  // Waits (messages, barrier) poll for up to `spin` before they park on the world's condition
  // variable, as MPI ranks poll: a hand-off then costs a cache line, not a thread wake-up
  // (tens of microseconds). 0 (the default: unit tests, many ranks on few cores) parks at once.
  // Inherited by later splits.
  void set_spin(std::chrono::nanoseconds spin) { spin_ = spin; }

 protected:
  std::unique_ptr<Transport> make_split(std::string_view name, int color, int key) override;
  // Plain memory: the ranks share one address space (every world and sub-world has one).
  std::unique_ptr<PeerMemory> make_peer_memory() override;

 private:
  ThreadTransport(ThreadWorld& world, std::shared_ptr<ThreadGroup> group, int rank, std::shared_ptr<CallScope> scope,
                  MemorySpace& memory, std::string name);
  // Matches a new send or receive against the destination's mailbox, or parks it there.
  ThreadOp* post(const ThreadOp& fields, bool is_send);
  // Called without the lock once both ops left the queues: copy, then complete both sides.
  void complete_pair(ThreadOp* send, ThreadOp* recv);
  [[noreturn]] void throw_peer_failed(const std::string& while_doing, const Request* r) const;

  ThreadWorld& world_;
  std::shared_ptr<ThreadGroup> group_;
  int rank_;
  std::string name_;  // split name; empty for a rank of the whole world
  HostMemory own_memory_;
  MemorySpace* memory_;  // own_memory_, or the parent's for a sub-transport
  std::chrono::nanoseconds spin_{0};
};

// A rank's body failed, so this rank stopped waiting for it.
class PeerFailed : public TransportError {
 public:
  using TransportError::TransportError;
};

class ThreadWorld {
 public:
  explicit ThreadWorld(int size);
  ~ThreadWorld();
  ThreadWorld(const ThreadWorld&) = delete;
  ThreadWorld& operator=(const ThreadWorld&) = delete;

  int size() const { return size_; }

  // Runs body(transport) on `size` threads, one per rank, and returns when all finish.
  // If any rank throws, the others are woken (PeerFailed) and the first original exception
  // is rethrown here, like gloo's spawn. `setup` runs on each transport before the body.
  void run(const std::function<void(ThreadTransport&)>& body,
           const std::function<void(ThreadTransport&)>& setup = nullptr);

 private:
  friend class ThreadTransport;
  const int size_;
  // One lock and condition variable for every group of the world: a failure anywhere wakes
  // every waiter, and a split's exchange needs no second lock order.
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<ThreadGroup> root_;
  int failed_rank_ = -1;  // world rank whose body threw
};

}  // namespace collbench
