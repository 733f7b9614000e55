#pragma once
// Transport over NCCL point-to-point (ncclSend/ncclRecv) on the stream of a CUDA memory
// space. The matching/launch model is GroupedTransport's (see grouped_transport.hpp): ops are
// recorded, every wait launches all recorded ops as one ncclGroupStart/End group on the
// stream and returns; the host waits only in drain() — memory().synchronize(), once per timed
// sample, and upload/download — and in barrier/split, polling the stream (cudaStreamQuery plus
// ncclCommGetAsyncError) until it is idle or the transport's timeout passes; then the
// communicator is aborted (ncclCommAbort) and a TimeoutError names the peer of the last group. The communicator is
// non-blocking (config.blocking = 0), so init and connection setup are under the timeout too.
//
// Copies and reduce kernels of the memory space share the stream, so they are ordered with
// communication exactly as the algorithm issued them.
//
// split() is ncclCommSplit (after an ncclAllGather of every rank's color and key, which
// gives the sub-transport its world ranks); the sub-transport shares the memory space and
// stream, owns its communicator and is destroyed before its parent's.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "collectives/backends/nccl/grouped_transport.hpp"
#include "collectives/backends/world.hpp"

namespace collbench {

class NcclTransport final : public GroupedTransport {
 public:
  // Collective over `world` (rank 0's unique id is broadcast over it; `world` is not kept).
  // `memory` is device memory on the current device whose work runs on `stream`.
  NcclTransport(World& world, MemorySpace& memory, cudaStream_t stream,
                std::shared_ptr<CallScope> scope = std::make_shared<CallScope>());
  ~NcclTransport() override;
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view backend() const override { return "nccl"; }
  // synchronize() drains under the timeout. Sub-transports hand out their root's (the split
  // contract: one memory space); their groups run on the same stream, so its drain waits for
  // them too (their communicator's async errors then surface as the stream's timeout).
  MemorySpace& memory() override { return *handed_out_; }
  void barrier() override;  // 1-byte ncclAllReduce, waited for under the timeout
  std::string_view split_name() const override { return name_; }
  int world_rank(int rank) const override;

  // For the NCCL library entries: enqueue with comm()/stream() and pass the return code to
  // check_enqueued; the harness drains the stream once per sample (memory().synchronize()).
  ncclComm_t comm() const { return comm_; }
  cudaStream_t stream() const { return stream_; }
  void check_enqueued(ncclResult_t rc, const char* call, const char* file, int line);

 protected:
  void run_group(std::span<const Op> ops, const Request* focus) override;
  void await_idle() override;  // the stream, under the timeout, naming the last group
  std::unique_ptr<Transport> make_split(std::string_view name, int color, int key) override;

 private:
  // A sub-transport over `child` (from ncclCommSplit, maybe still initialising).
  NcclTransport(ncclComm_t child, NcclTransport& parent, std::string name, std::vector<int> world_ranks);
  void init(const ncclUniqueId& id);
  void zero_barrier_byte();
  void ensure_usable() const;
  // Non-blocking comm: until the last call took effect; `stuck` says what a timeout means.
  void await_ready(const char* what, const char* stuck = "a peer never joined");
  void await_stream(std::span<const Op> ops, const Request* focus);
  [[noreturn]] void fail(ncclResult_t rc, const std::string& what, const ErrorContext& ctx);
  void abort() noexcept;

  MemorySpace& memory_;
  DrainingMemory draining_{*this, memory_};
  MemorySpace* handed_out_ = &draining_;
  cudaStream_t stream_;
  ncclComm_t comm_ = nullptr;
  ncclComm_t split_child_ = nullptr;  // ncclCommSplit's out-parameter, written when the split completes
  int rank_ = 0;
  int size_ = 1;
  bool aborted_ = false;
  void* barrier_buf_ = nullptr;  // 1 byte of device memory
  std::string name_;              // split name; empty for a root transport
  std::vector<int> world_ranks_;  // sub-transports: root-transport rank of each rank
  std::vector<Op> last_group_;    // the last launched group, for a timeout at drain (capacity kept)
  Request last_focus_;            // the request waited on when it was launched (inactive: none)
};

// Checks an NCCL return code: an error throws TransportError with the call, NCCL's message
// and file:line. ncclInProgress (non-blocking communicators) is waited out through `t`.
#define COLLBENCH_NCCL_CHECK(call, transport) (transport).check_enqueued((call), #call, __FILE__, __LINE__)

}  // namespace collbench
