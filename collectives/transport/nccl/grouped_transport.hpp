#pragma once
// The NCCL point-to-point model, separated from NCCL so it is exercised on the CPU.
//
// NCCL has no tags and no request objects: ncclSend/ncclRecv calls between
// ncclGroupStart/ncclGroupEnd become one launch on a stream, progress concurrently, and
// match the peer's calls in posting order per (sender, receiver) pair. Sends and receives
// not fused in one group cannot progress concurrently, so an MPI-style algorithm that
// posts irecv/isend and then waits on them in any grouping would deadlock if each call
// were launched alone. Hence:
//
//   isend/irecv  record the operation (nothing is launched);
//   wait(r), wait_all(rs), barrier()
//                launch EVERY recorded operation as one group — also those the caller is
//                not waiting on — and return when the whole group has completed.
//
// So when a wait returns nothing is in flight, and a request is complete iff it was
// recorded before the last launch. Consequences for algorithms (the tests check every
// registered algorithm under this model, on the CPU):
//   - per ordered pair of ranks, receives must be posted in the order of the sends; tags
//     only label errors (they are not matched);
//   - a receive must have exactly the size of its send;
//   - a wait may complete more than asked for, never less.
// 0-byte operations carry no data and complete without being launched, on both sides.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "collectives/transport/transport.hpp"

namespace collbench {

class GroupedTransport : public Transport {
 public:
  explicit GroupedTransport(std::shared_ptr<CallScope> scope = std::make_shared<CallScope>())
      : Transport(std::move(scope)) {}
  struct Op {  // one recorded ncclSend/ncclRecv
    void* buf;
    std::size_t bytes;
    int peer;
    int tag;
    bool is_send;
  };

  Request isend(const void* buf, std::size_t bytes, int peer, int tag) override;
  Request irecv(void* buf, std::size_t bytes, int peer, int tag) override;
  void wait(Request& r) override;
  void wait_all(std::span<Request> rs) override;

 protected:
  // Launches `ops` (in posting order) as one group and returns when all completed; throws
  // TimeoutError/TransportError naming `focus` (the request waited on) or else the first op.
  virtual void run_group(std::span<const Op> ops, const Request* focus) = 0;
  // Launches whatever is recorded (subclasses call it first in barrier() and collectives).
  void flush(const Request* focus = nullptr);
  bool has_pending() const { return !pending_.empty(); }
  // An error context for an op of a group.
  ErrorContext op_context(const Op& op) const;

 private:
  Request record(const Op& op);
  std::vector<Op> pending_;       // recorded, not launched; capacity kept across groups
  std::uint64_t next_id_ = 1;     // id of the next recorded op (Request::handle)
  std::uint64_t launched_below_ = 1;  // every id below this has completed
};

}  // namespace collbench
