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
//                not waiting on. On NCCL the group is enqueued on the stream the memory
//                space's copies and kernels use, so everything the algorithm does next is
//                ordered after it; the host does not wait (barrier does).
//   drain()      (memory().synchronize(), upload, download) waits until everything launched
//                has completed, under the timeout: once per timed sample, as nccl-tests
//                launches N ops and synchronises once.
//
// So when a wait returns every recorded op is launched, and a request is complete — for
// everything ordered on the stream — iff it was recorded before the last launch.
// Consequences for algorithms (the tests check every
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

  // Launches what is recorded and waits until everything launched has completed.
  void drain() {
    flush();
    await_idle();
  }

  Request isend(const void* buf, std::size_t bytes, int peer, int tag) override;
  Request irecv(void* buf, std::size_t bytes, int peer, int tag) override;
  void wait(Request& r) override;
  void wait_all(std::span<Request> rs) override;

 protected:
  // Launches `ops` (in posting order) as one group — NCCL: enqueued on the stream, completed
  // by await_idle; the CPU model: completed here; throws TimeoutError/TransportError naming
  // `focus` (the request waited on) or else the first op.
  virtual void run_group(std::span<const Op> ops, const Request* focus) = 0;
  // Waits until every launched group has completed (NCCL: the stream is idle); throws
  // TimeoutError/TransportError naming the last group's peer. Default: groups complete at launch.
  virtual void await_idle() {}
  // Launches whatever is recorded (subclasses call it first in barrier() and collectives).
  void flush(const Request* focus = nullptr);
  bool has_pending() const { return !pending_.empty(); }
  // An error context for an op of a group.
  ErrorContext op_context(const Op& op) const;

 private:
  Request record(const Op& op);
  std::vector<Op> pending_;       // recorded, not launched; capacity kept across groups
  std::uint64_t next_id_ = 1;     // id of the next recorded op (Request::handle)
  std::uint64_t launched_below_ = 1;  // every id below this has been launched
};

// The memory space a grouped transport hands out: its device memory, whose synchronize(),
// upload and download (which wait for the stream) drain the transport first, under its
// timeout — so a hung peer is reported, not waited for in cudaStreamSynchronize forever.
class DrainingMemory final : public MemorySpace {
 public:
  DrainingMemory(GroupedTransport& t, MemorySpace& m) : t_(t), m_(m) {}
  MemoryKind kind() const override { return m_.kind(); }
  void* allocate(std::size_t bytes) override { return m_.allocate(bytes); }
  void deallocate(void* p) noexcept override { m_.deallocate(p); }
  void copy(void* dst, const void* src, std::size_t bytes) override { m_.copy(dst, src, bytes); }
  void reduce(const ReduceOp& op, void* out, const void* a, const void* b, std::size_t count) override {
    m_.reduce(op, out, a, b, count);
  }
  void upload(void* dst, const void* host_src, std::size_t bytes) override {
    t_.drain();
    m_.upload(dst, host_src, bytes);
  }
  void download(void* host_dst, const void* src, std::size_t bytes) override {
    t_.drain();
    m_.download(host_dst, src, bytes);
  }
  void synchronize() override {
    t_.drain();
    m_.synchronize();
  }
  MemorySpace& inner() const { return m_; }

 private:
  GroupedTransport& t_;
  MemorySpace& m_;
};

}  // namespace collbench
