#include "collectives/transport/thread/thread_transport.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

namespace collbench {

struct ThreadWorld::Op {
  int src = -1;
  int dst = -1;
  int tag = -1;
  const void* sbuf = nullptr;
  void* rbuf = nullptr;
  std::size_t bytes = 0;
  bool done = false;
  bool truncated = false;  // receive buffer smaller than the matched send
  std::size_t matched_bytes = 0;
};

ThreadWorld::ThreadWorld(int size) : size_(size), boxes_(size > 0 ? size : 0) {
  if (size < 1) throw Error("thread world size must be >= 1, got " + std::to_string(size));
}

ThreadWorld::~ThreadWorld() = default;

ThreadWorld::Op* ThreadWorld::new_op() {
  if (free_.empty()) {
    ops_.push_back(std::make_unique<Op>());
    return ops_.back().get();
  }
  Op* op = free_.back();
  free_.pop_back();
  *op = Op{};
  return op;
}

void ThreadWorld::release_op(Op* op) { free_.push_back(op); }

void ThreadWorld::complete_pair(Op* send, Op* recv) {
  // Both ops are out of the queues, so only their two owners can reach them: copy without
  // the lock (transfers between different pairs overlap), then publish completion under it.
  const bool truncated = send->bytes > recv->bytes;
  if (!truncated && send->bytes) std::memcpy(recv->rbuf, send->sbuf, send->bytes);
  std::lock_guard lk(mu_);
  send->matched_bytes = recv->matched_bytes = send->bytes;
  send->truncated = recv->truncated = truncated;
  send->done = recv->done = true;
  cv_.notify_all();
}

void ThreadWorld::run(const std::function<void(ThreadTransport&)>& body,
                      const std::function<void(ThreadTransport&)>& setup) {
  {
    std::lock_guard lk(mu_);
    failed_rank_ = -1;
    barrier_waiting_ = 0;
    for (auto& b : boxes_) {
      b.posted_recvs.clear();
      b.unexpected_sends.clear();
    }
  }
  std::vector<std::exception_ptr> errors(size_);
  std::vector<bool> cascade(size_, false);
  std::vector<std::thread> threads;
  threads.reserve(size_);
  for (int r = 0; r < size_; ++r) {
    threads.emplace_back([&, r] {
      ThreadTransport t(*this, r);
      try {
        if (setup) setup(t);
        body(t);
      } catch (const PeerFailed&) {
        errors[r] = std::current_exception();
        cascade[r] = true;
      } catch (...) {
        errors[r] = std::current_exception();
        std::lock_guard lk(mu_);
        if (failed_rank_ < 0) failed_rank_ = r;
        cv_.notify_all();
      }
    });
  }
  for (auto& th : threads) th.join();
  // Prefer the root cause over the PeerFailed errors it caused.
  for (int r = 0; r < size_; ++r)
    if (errors[r] && !cascade[r]) std::rethrow_exception(errors[r]);
  for (int r = 0; r < size_; ++r)
    if (errors[r]) std::rethrow_exception(errors[r]);
}

int ThreadTransport::size() const { return world_.size(); }

ThreadWorld::Op* ThreadWorld::post(const Op& fields, bool is_send) {
  Op* match = nullptr;
  Op* op = nullptr;
  {
    std::lock_guard lk(mu_);
    op = new_op();
    *op = fields;
    // The destination's mailbox: a send looks for a posted receive and otherwise waits as
    // unexpected; a receive does the opposite. FIFO per (source, tag), like MPI.
    Mailbox& box = boxes_[op->dst];
    auto& look = is_send ? box.posted_recvs : box.unexpected_sends;
    auto& park = is_send ? box.unexpected_sends : box.posted_recvs;
    auto it = std::find_if(look.begin(), look.end(),
                           [&](const Op* o) { return o->src == op->src && o->tag == op->tag; });
    if (it == look.end()) {
      park.push_back(op);
      return op;
    }
    match = *it;
    look.erase(it);
  }
  if (is_send) complete_pair(op, match);
  else complete_pair(match, op);
  return op;
}

Request ThreadTransport::isend(const void* buf, std::size_t bytes, int peer, int tag) {
  check_peer(peer, "isend");
  check_tag(tag);
  ThreadWorld::Op fields;
  fields.src = rank_;
  fields.dst = peer;
  fields.tag = tag;
  fields.sbuf = buf;
  fields.bytes = bytes;
  return {reinterpret_cast<std::uintptr_t>(world_.post(fields, true)), peer, tag, bytes, true, true};
}

Request ThreadTransport::irecv(void* buf, std::size_t bytes, int peer, int tag) {
  check_peer(peer, "irecv");
  check_tag(tag);
  ThreadWorld::Op fields;
  fields.src = peer;
  fields.dst = rank_;
  fields.tag = tag;
  fields.rbuf = buf;
  fields.bytes = bytes;
  return {reinterpret_cast<std::uintptr_t>(world_.post(fields, false)), peer, tag, bytes, false, true};
}

void ThreadTransport::wait(Request& r) {
  if (!r.active) return;
  auto* op = reinterpret_cast<ThreadWorld::Op*>(r.handle);
  std::unique_lock lk(world_.mu_);
  const auto deadline = Clock::now() + timeout();
  while (!op->done) {
    if (world_.failed_rank_ >= 0) {
      ErrorContext c = error_context(&r);
      throw PeerFailed("rank " + std::to_string(world_.failed_rank_) + " failed while this rank waited for " +
                           (r.is_send ? "its send to" : "a message from") + " peer " + std::to_string(r.peer),
                       c);
    }
    if (world_.cv_.wait_until(lk, deadline) == std::cv_status::timeout && !op->done) {
      throw TimeoutError(std::string("timed out after ") + std::to_string(timeout().count()) + " ms waiting for " +
                             (r.is_send ? "peer to receive" : "message from peer") + " " + std::to_string(r.peer),
                         error_context(&r));
    }
  }
  const bool truncated = op->truncated;
  const std::size_t sent = op->matched_bytes;
  world_.release_op(op);
  r.active = false;
  if (truncated)
    throw TransportError("message truncated: peer sent " + std::to_string(sent) + " bytes into a " +
                             std::to_string(r.bytes) + "-byte receive",
                         error_context(&r));
}

void ThreadTransport::barrier() {
  std::unique_lock lk(world_.mu_);
  const long gen = world_.barrier_generation_;
  if (++world_.barrier_waiting_ == world_.size_) {
    world_.barrier_waiting_ = 0;
    ++world_.barrier_generation_;
    world_.cv_.notify_all();
    return;
  }
  const auto deadline = Clock::now() + timeout();
  while (world_.barrier_generation_ == gen) {
    if (world_.failed_rank_ >= 0)
      throw PeerFailed("rank " + std::to_string(world_.failed_rank_) + " failed during a barrier", error_context());
    if (world_.cv_.wait_until(lk, deadline) == std::cv_status::timeout && world_.barrier_generation_ == gen)
      throw TimeoutError("timed out in barrier (" + std::to_string(world_.size_ - world_.barrier_waiting_) +
                             " rank(s) never arrived)",
                         error_context());
  }
}

}  // namespace collbench
