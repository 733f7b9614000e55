#pragma once
// N ranks as threads of one process: the "fake distributed" world of the teaching material.
// Messages match by (source, tag) in FIFO order like MPI; a send completes only when its
// receive is matched (rendezvous), so an algorithm that would deadlock on a real network
// for large messages deadlocks here too, and the timeout names the peer.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "collectives/transport/transport.hpp"

namespace collbench {

class ThreadWorld;

class ThreadTransport final : public Transport {
 public:
  ThreadTransport(ThreadWorld& world, int rank) : world_(world), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override;
  std::string_view backend() const override { return "thread"; }
  MemorySpace& memory() override { return memory_; }
  Request isend(const void* buf, std::size_t bytes, int peer, int tag) override;
  Request irecv(void* buf, std::size_t bytes, int peer, int tag) override;
  void wait(Request& r) override;
  void barrier() override;

 private:
  ThreadWorld& world_;
  int rank_;
  HostMemory memory_;
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
  struct Op;  // one pending send or receive
  struct Mailbox {
    std::deque<Op*> posted_recvs;      // receives waiting for a send
    std::deque<Op*> unexpected_sends;  // sends waiting for a receive
  };

  Op* new_op();
  // Matches a new send or receive against the destination's mailbox, or parks it there.
  Op* post(const Op& fields, bool is_send);
  void release_op(Op* op);
  // Called without mu_ once both ops left the queues: copy, then complete both sides.
  void complete_pair(Op* send, Op* recv);

  const int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Mailbox> boxes_;
  std::vector<std::unique_ptr<Op>> ops_;  // every op ever made; reused through free_
  std::vector<Op*> free_;
  // Barrier state (generation counting) and failure propagation.
  int barrier_waiting_ = 0;
  long barrier_generation_ = 0;
  int failed_rank_ = -1;
};

}  // namespace collbench
