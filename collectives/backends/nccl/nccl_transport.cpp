#include "collectives/backends/nccl/nccl_transport.hpp"

#include <atomic>
#include <string>
#include <utility>

#include "collectives/gpu/cuda_check.hpp"

namespace collbench {
namespace {

std::string where(const char* file, int line) { return std::string(" [") + file + ":" + std::to_string(line) + "]"; }

// "send to 1 (4096 B), recv from 3 (4096 B), ..." — what the stuck group contained.
std::string describe_ops(std::span<const GroupedTransport::Op> ops) {
  std::string s;
  const std::size_t shown = ops.size() < 8 ? ops.size() : 8;
  for (std::size_t i = 0; i < shown; ++i) {
    if (i) s += ", ";
    s += ops[i].is_send ? "send to " : "recv from ";
    s += std::to_string(ops[i].peer);
    s += " (" + std::to_string(ops[i].bytes) + " B, tag " + std::to_string(ops[i].tag) + ")";
  }
  if (shown < ops.size()) s += ", ... " + std::to_string(ops.size() - shown) + " more";
  return s;
}

}  // namespace

NcclTransport::NcclTransport(World& world, MemorySpace& memory, cudaStream_t stream, std::shared_ptr<CallScope> scope)
    : GroupedTransport(std::move(scope)), memory_(memory), stream_(stream) {
  rank_ = world.rank();
  size_ = world.size();
  // Rank 0 creates the id; a failure there is broadcast too, so no rank waits forever.
  struct {
    int ok;
    ncclUniqueId id;
  } boot{};
  if (rank_ == 0) boot.ok = ncclGetUniqueId(&boot.id) == ncclSuccess;
  world.broadcast(std::as_writable_bytes(std::span(&boot, 1)), 0);
  if (!boot.ok) throw TransportError("ncclGetUniqueId failed on rank 0", error_context());

  barrier_buf_ = memory_.allocate(1);
  try {
    init(boot.id);
  } catch (...) {
    memory_.deallocate(barrier_buf_);
    throw;
  }
}

void NcclTransport::init(const ncclUniqueId& id) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every NCCL call returns at once; we poll under the timeout
  const ncclResult_t rc = ncclCommInitRankConfig(&comm_, size_, id, rank_, &config);
  if (rc != ncclSuccess && rc != ncclInProgress) {
    // NCCL may have created the communicator before failing: abort it, or its proxy thread
    // and device buffers outlive the error.
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
    aborted_ = true;
    throw TransportError(std::string("ncclCommInitRankConfig failed: ") + ncclGetErrorString(rc) +
                             where(__FILE__, __LINE__),
                         error_context());
  }
  await_ready("ncclCommInitRankConfig");  // aborts the communicator on failure or timeout
  zero_barrier_byte();
}

void NcclTransport::zero_barrier_byte() {
  const unsigned char zero = 0;
  try {
    memory_.upload(barrier_buf_, &zero, 1);
  } catch (...) {
    abort();
    throw;
  }
}

NcclTransport::NcclTransport(ncclComm_t child, NcclTransport& parent, std::string name, std::vector<int> world_ranks)
    : GroupedTransport(parent.shared_scope()),
      memory_(parent.memory_),
      handed_out_(parent.handed_out_),
      stream_(parent.stream_),
      comm_(child),
      name_(std::move(name)),
      world_ranks_(std::move(world_ranks)) {
  try {
    await_ready("ncclCommSplit");  // a non-blocking split may still be initialising the child
    ncclResult_t rc = ncclCommUserRank(comm_, &rank_);
    if (rc == ncclSuccess) rc = ncclCommCount(comm_, &size_);
    if (rc != ncclSuccess) fail(rc, "ncclCommUserRank/ncclCommCount of a split communicator", error_context());
    barrier_buf_ = memory_.allocate(1);
    zero_barrier_byte();
  } catch (...) {
    if (barrier_buf_) memory_.deallocate(barrier_buf_);
    abort();
    throw;
  }
}

int NcclTransport::world_rank(int rank) const {
  return world_ranks_.empty() ? rank : world_ranks_[static_cast<std::size_t>(rank)];
}

std::unique_ptr<Transport> NcclTransport::make_split(std::string_view name, int color, int key) {
  ensure_usable();
  flush();
  if (color < 0) color = NCCL_SPLIT_NOCOLOR;
  // Every rank's (color, key), for the members' world ranks (NCCL does not report them).
  std::vector<int> all(2 * static_cast<std::size_t>(size_));
  void* dev = memory_.allocate(all.size() * sizeof(int));
  try {
    const int mine[2] = {color, key};
    memory_.upload(static_cast<int*>(dev) + 2 * rank_, mine, sizeof mine);
    COLLBENCH_NCCL_CHECK(ncclAllGather(static_cast<int*>(dev) + 2 * rank_, dev, 2, ncclInt32, comm_, stream_), *this);
    await_stream({}, nullptr);
    memory_.download(all.data(), dev, all.size() * sizeof(int));
  } catch (...) {
    memory_.deallocate(dev);
    throw;
  }
  memory_.deallocate(dev);

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  // A non-blocking split returns ncclInProgress with the handle still null: NCCL's init job
  // stores it (release) when the child is complete, before the parent's async state leaves
  // ncclInProgress. So wait on the parent, then read the handle (null on a non-member). The
  // slot is a member so that a job still running after a timeout never writes to a dead frame.
  split_child_ = nullptr;
  const ncclResult_t rc = ncclCommSplit(comm_, color, key, &split_child_, &config);
  if (rc != ncclSuccess && rc != ncclInProgress)
    fail(rc, "ncclCommSplit failed" + where(__FILE__, __LINE__), error_context());
  await_ready("ncclCommSplit");
  ncclComm_t child = std::atomic_ref<ncclComm_t>(split_child_).exchange(nullptr, std::memory_order_acquire);
  if (color == NCCL_SPLIT_NOCOLOR) {
    if (child) throw TransportError("ncclCommSplit gave a communicator for NCCL_SPLIT_NOCOLOR", error_context());
    return nullptr;
  }
  if (!child) throw TransportError("ncclCommSplit completed without a communicator for color " + std::to_string(color),
                                   error_context());

  std::vector<int> colors(static_cast<std::size_t>(size_)), keys(colors.size());
  for (std::size_t r = 0; r < colors.size(); ++r) {
    colors[r] = all[2 * r];
    keys[r] = all[2 * r + 1];
  }
  std::vector<int> world_ranks = split_members(colors, keys, color);
  for (int& w : world_ranks) w = world_rank(w);
  auto sub = std::unique_ptr<NcclTransport>(new NcclTransport(child, *this, std::string(name), std::move(world_ranks)));
  // NCCL orders a group by (key, parent rank) like MPI_Comm_split; say so if that ever changes.
  if (sub->size() != static_cast<int>(sub->world_ranks_.size()) ||
      sub->world_ranks_[static_cast<std::size_t>(sub->rank())] != world_rank(rank_))
    throw TransportError("ncclCommSplit ordered split '" + std::string(name) +
                             "' differently from (key, rank): rank " + std::to_string(sub->rank()) + " of " +
                             std::to_string(sub->size()),
                         error_context());
  return sub;
}

NcclTransport::~NcclTransport() {
  release_splits();  // sub-communicators before this one
  if (comm_ && !aborted_) {
    // Finalize completes outstanding work (non-blocking: poll), bounded by the timeout;
    // a communicator that does not finish is aborted instead of hanging the exit.
    ncclResult_t st = ncclCommFinalize(comm_);
    Deadline deadline(scope(), Deadline::kEveryPoll, this, "in ncclCommFinalize");
    while (st == ncclInProgress && !deadline.expired())
      if (ncclCommGetAsyncError(comm_, &st) != ncclSuccess) break;
    if (st == ncclSuccess) ncclCommDestroy(comm_);
    else ncclCommAbort(comm_);
  }
  if (barrier_buf_) memory_.deallocate(barrier_buf_);
}

void NcclTransport::abort() noexcept {
  if (comm_ && !aborted_) ncclCommAbort(comm_);
  aborted_ = true;
}

void NcclTransport::ensure_usable() const {
  if (aborted_)
    throw TransportError("the NCCL communicator was aborted after an earlier error or timeout", error_context());
}

void NcclTransport::fail(ncclResult_t rc, const std::string& what, const ErrorContext& ctx) {
  std::string msg = what + ": " + ncclGetErrorString(rc);
  if (comm_) {
    const char* last = ncclGetLastError(comm_);
    if (last && *last) msg += std::string(" (") + last + ")";
  }
  abort();  // an asynchronous NCCL error leaves the communicator unusable
  throw TransportError(msg, ctx);
}

void NcclTransport::await_ready(const char* what, const char* stuck) {
  // Self-timed (it aborts the communicator and throws); published with the transport so the
  // harness's watchdog, the backstop, names the rank too (harness/runtime/watchdog.hpp).
  Deadline deadline(scope(), Deadline::kEveryPoll, this, "waiting for an NCCL call to be enqueued");
  const bool ready = deadline.poll([&] {
    ncclResult_t st = ncclSuccess;
    const ncclResult_t rc = ncclCommGetAsyncError(comm_, &st);
    if (rc != ncclSuccess) fail(rc, std::string("ncclCommGetAsyncError after ") + what, error_context());
    if (st != ncclSuccess && st != ncclInProgress) fail(st, what, error_context());
    return st == ncclSuccess;
  });
  if (!ready) {
    abort();
    throw TimeoutError(std::string(what) + " did not complete within " + std::to_string(deadline.timeout().count()) +
                           " ms (" + stuck + "); communicator aborted",
                       error_context());
  }
}

void NcclTransport::check_enqueued(ncclResult_t rc, const char* call, const char* file, int line) {
  if (rc == ncclSuccess) return;
  if (rc == ncclInProgress) {
    await_ready(call);
    return;
  }
  fail(rc, std::string(call) + " failed" + where(file, line), error_context());
}

void NcclTransport::await_stream(std::span<const Op> ops, const Request* focus) {
  // A stream query costs more than a clock read: check the deadline after every one.
  Deadline deadline(scope(), Deadline::kEveryPoll, this, "waiting for the CUDA stream (NCCL)");
  if (focus) deadline.message(focus->peer, focus->tag, focus->bytes, focus->is_send);
  unsigned polls = 0;
  const bool idle = deadline.poll([&] {
    const cudaError_t q = cudaStreamQuery(stream_);
    if (q == cudaSuccess) return true;
    if (q != cudaErrorNotReady) {
      abort();
      COLLBENCH_CUDA_CHECK(q);
    }
    // A failed peer or network shows up as an asynchronous error, not as a stuck stream.
    if ((polls++ & 63u) == 0) {
      ncclResult_t st = ncclSuccess;
      if (ncclCommGetAsyncError(comm_, &st) == ncclSuccess && st != ncclSuccess && st != ncclInProgress)
        fail(st, "NCCL reported an asynchronous error", focus ? error_context(focus) : error_context());
    }
    return false;
  });
  if (idle) return;
  abort();
  ErrorContext ctx = focus ? error_context(focus) : ops.empty() ? error_context() : op_context(ops.front());
  std::string msg = "timed out after " + std::to_string(deadline.timeout().count()) + " ms waiting for ";
  if (ops.empty()) msg += "the CUDA stream (collective or barrier)";
  else
    msg += (ctx.peer >= 0 ? "peer " + std::to_string(ctx.peer) + " in " : std::string()) +
           "the last NCCL group launched (" + std::to_string(ops.size()) + " op(s): " + describe_ops(ops) + ")";
  throw TimeoutError(msg + "; communicator aborted", ctx);
}

void NcclTransport::run_group(std::span<const Op> ops, const Request* focus) {
  ensure_usable();
  const ErrorContext ctx = focus ? error_context(focus) : op_context(ops.front());
  ncclResult_t rc = ncclGroupStart();
  if (rc != ncclSuccess) fail(rc, "ncclGroupStart failed" + where(__FILE__, __LINE__), ctx);
  for (const Op& op : ops) {
    // Bytes as int8: NCCL only moves them; matching is by order and count per peer.
    rc = op.is_send ? ncclSend(op.buf, op.bytes, ncclInt8, op.peer, comm_, stream_)
                    : ncclRecv(op.buf, op.bytes, ncclInt8, op.peer, comm_, stream_);
    if (rc != ncclSuccess) {
      ncclGroupEnd();  // close the group before reporting
      fail(rc, std::string(op.is_send ? "ncclSend" : "ncclRecv") + " failed" + where(__FILE__, __LINE__),
           op_context(op));
    }
  }
  rc = ncclGroupEnd();
  if (rc == ncclInProgress)
    await_ready("ncclGroupEnd", "NCCL could not enqueue the group: a peer's matching group never came");
  else if (rc != ncclSuccess) fail(rc, "ncclGroupEnd failed" + where(__FILE__, __LINE__), ctx);
  // Enqueued: the stream orders it before the algorithm's next copy or kernel; the host waits
  // once per sample (await_idle). Kept for a timeout message then (no allocation once warm).
  last_group_.assign(ops.begin(), ops.end());
  last_focus_ = focus ? *focus : Request{};
}

void NcclTransport::await_idle() {
  ensure_usable();
  await_stream(last_group_, last_focus_.active ? &last_focus_ : nullptr);
  last_group_.clear();
  last_focus_ = Request{};
}

void NcclTransport::barrier() {
  ensure_usable();
  flush();
  COLLBENCH_NCCL_CHECK(ncclAllReduce(barrier_buf_, barrier_buf_, 1, ncclUint8, ncclMax, comm_, stream_), *this);
  await_stream({}, nullptr);
  last_group_.clear();  // everything launched before has completed too
  last_focus_ = Request{};
}

}  // namespace collbench
