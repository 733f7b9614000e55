#include "collectives/backends/thread/thread_transport.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <numeric>
#include <thread>

namespace collbench {

struct ThreadOp {
  int src = -1;
  int dst = -1;
  int tag = -1;
  const void* sbuf = nullptr;
  void* rbuf = nullptr;
  std::size_t bytes = 0;
  // Set under the world's lock; atomic so a spinning waiter may read it without the lock
  // (release after the copy: the data is visible once it is seen true).
  std::atomic<bool> done{false};
  bool truncated = false;  // receive buffer smaller than the matched send
  std::size_t matched_bytes = 0;

  void assign(const ThreadOp& f) {  // a pooled op made new (the atomic is not copyable)
    src = f.src;
    dst = f.dst;
    tag = f.tag;
    sbuf = f.sbuf;
    rbuf = f.rbuf;
    bytes = f.bytes;
    done.store(false, std::memory_order_relaxed);
    truncated = false;
    matched_bytes = 0;
  }
};

namespace {

// Polls `ready` for up to `spin`, true when it became ready; the waiter then parks on the
// condition variable as before. Past the first kBusyPolls it yields between polls, so ranks
// that outnumber the cores let their peers run.
template <class Ready>
bool spin_until(std::chrono::nanoseconds spin, Ready&& ready) {
  constexpr unsigned kBusyPolls = 4096;  // ~10 us of a pure poll
  if (spin.count() <= 0) return false;
  const auto until = std::chrono::steady_clock::now() + spin;
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return false;
    if (i > kBusyPolls) std::this_thread::yield();
  }
}

}  // namespace

// Everything here is guarded by the world's mutex.
struct ThreadGroup {
  explicit ThreadGroup(std::vector<int> world_ranks_)
      : world_ranks(std::move(world_ranks_)),
        boxes(world_ranks.size()),
        split_colors(world_ranks.size()),
        split_keys(world_ranks.size()),
        split_groups(world_ranks.size()),
        split_ranks(world_ranks.size()) {}
  int size() const { return static_cast<int>(world_ranks.size()); }

  ThreadOp* new_op() {
    if (free.empty()) {
      ops.push_back(std::make_unique<ThreadOp>());
      return ops.back().get();
    }
    ThreadOp* op = free.back();
    free.pop_back();
    op->assign(ThreadOp{});
    return op;
  }
  void release_op(ThreadOp* op) { free.push_back(op); }

  struct Mailbox {
    std::deque<ThreadOp*> posted_recvs;      // receives waiting for a send
    std::deque<ThreadOp*> unexpected_sends;  // sends waiting for a receive
  };
  const std::vector<int> world_ranks;  // world rank of each rank of this group
  std::vector<Mailbox> boxes;
  std::vector<std::unique_ptr<ThreadOp>> ops;  // every op ever made; reused through `free`
  std::vector<ThreadOp*> free;
  // Barrier (generation counting).
  int barrier_waiting = 0;
  std::atomic<long> barrier_generation{0};  // atomic: a spinning waiter reads it without the lock
  // Split exchange: every rank leaves its (color, key); the last to arrive forms the groups
  // and leaves each rank its group and rank there. A rank reads its result before it can
  // arrive at the next split, and the next split cannot complete without it: no overwrite.
  int split_arrived = 0;
  long split_generation = 0;
  std::vector<int> split_colors, split_keys;
  std::vector<std::shared_ptr<ThreadGroup>> split_groups;
  std::vector<int> split_ranks;
};

namespace {

std::vector<int> iota_ranks(int n) {
  std::vector<int> v(static_cast<std::size_t>(n > 0 ? n : 0));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace

ThreadWorld::ThreadWorld(int size) : size_(size) {
  if (size < 1) throw Error("thread world size must be >= 1, got " + std::to_string(size));
  root_ = std::make_shared<ThreadGroup>(iota_ranks(size));
}

ThreadWorld::~ThreadWorld() = default;

void ThreadWorld::run(const std::function<void(ThreadTransport&)>& body,
                      const std::function<void(ThreadTransport&)>& setup) {
  {
    std::lock_guard lk(mu_);
    failed_rank_ = -1;
    root_->barrier_waiting = 0;
    root_->split_arrived = 0;
    for (auto& b : root_->boxes) {
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
      try {
        ThreadTransport t(*this, r);
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

ThreadTransport::ThreadTransport(ThreadWorld& world, int rank, std::shared_ptr<CallScope> scope)
    : Transport(std::move(scope)), world_(world), group_(world.root_), rank_(rank), memory_(&own_memory_) {
  if (rank < 0 || rank >= world.size())
    throw Error("thread rank " + std::to_string(rank) + " is outside the world of " + std::to_string(world.size()));
}

ThreadTransport::ThreadTransport(ThreadWorld& world, std::shared_ptr<ThreadGroup> group, int rank,
                                 std::shared_ptr<CallScope> scope, MemorySpace& memory, std::string name)
    : Transport(std::move(scope)),
      world_(world),
      group_(std::move(group)),
      rank_(rank),
      name_(std::move(name)),
      memory_(&memory) {}

ThreadTransport::~ThreadTransport() { release_splits(); }  // they use this rank's memory

namespace {

// Each rank allocates its own segment and tells every peer where it is, by message.
class ThreadPeerMemory final : public PeerMemory {
 public:
  explicit ThreadPeerMemory(ThreadTransport& t) : PeerMemory(t), t_(t) {}
  ~ThreadPeerMemory() override { release(); }

 protected:
  Mapping map(std::size_t bytes) override {
    Mapping m;
    m.base.assign(static_cast<std::size_t>(size()), nullptr);
    auto* mine = static_cast<std::byte*>(host_.allocate(bytes));
    m.base[static_cast<std::size_t>(rank())] = mine;
    const int n = size();
    for (int k = 1; k < n; ++k) {  // everyone's pointer to everyone (tag: any; a fresh call)
      const int to = (rank() + k) % n, from = (rank() - k + n) % n;
      t_.sendrecv(&mine, sizeof mine, to, &m.base[static_cast<std::size_t>(from)], sizeof(std::byte*), from, 0);
    }
    return m;
  }
  void unmap(Mapping& m) noexcept override {
    // Unwinding an error: a peer may still read the segment and the barrier may never
    // complete; leave the segment to the failed world (tests only).
    if (std::uncaught_exceptions() > 0) return;
    try {
      t_.barrier();  // no peer reads the segment any more
    } catch (...) {  // a failed world: nobody reads it either
    }
    host_.deallocate(m.base[static_cast<std::size_t>(rank())]);
  }

 private:
  ThreadTransport& t_;
  HostMemory host_;
};

}  // namespace

std::unique_ptr<PeerMemory> ThreadTransport::make_peer_memory() { return std::make_unique<ThreadPeerMemory>(*this); }

int ThreadTransport::size() const { return group_->size(); }

int ThreadTransport::world_rank(int rank) const { return group_->world_ranks[static_cast<std::size_t>(rank)]; }

void ThreadTransport::complete_pair(ThreadOp* send, ThreadOp* recv) {
  // Both ops are out of the queues, so only their two owners can reach them: copy without
  // the lock (transfers between different pairs overlap), then publish completion under it.
  const bool truncated = send->bytes > recv->bytes;
  if (!truncated && send->bytes) std::memcpy(recv->rbuf, send->sbuf, send->bytes);
  std::lock_guard lk(world_.mu_);
  send->matched_bytes = recv->matched_bytes = send->bytes;
  send->truncated = recv->truncated = truncated;
  send->done.store(true, std::memory_order_release);
  recv->done.store(true, std::memory_order_release);
  world_.cv_.notify_all();
}

ThreadOp* ThreadTransport::post(const ThreadOp& fields, bool is_send) {
  ThreadOp* match = nullptr;
  ThreadOp* op = nullptr;
  {
    std::lock_guard lk(world_.mu_);
    op = group_->new_op();
    op->assign(fields);
    // The destination's mailbox: a send looks for a posted receive and otherwise waits as
    // unexpected; a receive does the opposite. FIFO per (source, tag), like MPI.
    ThreadGroup::Mailbox& box = group_->boxes[op->dst];
    auto& look = is_send ? box.posted_recvs : box.unexpected_sends;
    auto& park = is_send ? box.unexpected_sends : box.posted_recvs;
    auto it = std::find_if(look.begin(), look.end(),
                           [&](const ThreadOp* o) { return o->src == op->src && o->tag == op->tag; });
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
  ThreadOp fields;
  fields.src = rank_;
  fields.dst = peer;
  fields.tag = tag;
  fields.sbuf = buf;
  fields.bytes = bytes;
  return {reinterpret_cast<std::uintptr_t>(post(fields, true)), peer, tag, bytes, true, true};
}

Request ThreadTransport::irecv(void* buf, std::size_t bytes, int peer, int tag) {
  check_peer(peer, "irecv");
  check_tag(tag);
  ThreadOp fields;
  fields.src = peer;
  fields.dst = rank_;
  fields.tag = tag;
  fields.rbuf = buf;
  fields.bytes = bytes;
  return {reinterpret_cast<std::uintptr_t>(post(fields, false)), peer, tag, bytes, false, true};
}

void ThreadTransport::throw_peer_failed(const std::string& while_doing, const Request* r) const {
  throw PeerFailed("rank " + std::to_string(world_.failed_rank_) + " failed " + while_doing, error_context(r));
}

void ThreadTransport::wait(Request& r) {
  if (!r.active) return;
  auto* op = reinterpret_cast<ThreadOp*>(r.handle);
  spin_until(spin_, [op] { return op->done.load(std::memory_order_acquire); });
  std::unique_lock lk(world_.mu_);
  Deadline deadline(scope(), Deadline::kEveryPoll);  // a cv wait reads the clock anyway
  while (!op->done) {
    if (world_.failed_rank_ >= 0)
      throw_peer_failed(std::string("while this rank waited for ") + (r.is_send ? "its send to" : "a message from") +
                            " peer " + std::to_string(r.peer),
                        &r);
    if (world_.cv_.wait_until(lk, deadline.at()) == std::cv_status::timeout && !op->done) {
      throw TimeoutError(std::string("timed out after ") + std::to_string(deadline.timeout().count()) +
                             " ms waiting for " + (r.is_send ? "peer to receive" : "message from peer") + " " +
                             std::to_string(r.peer),
                         error_context(&r));
    }
  }
  const bool truncated = op->truncated;
  const std::size_t sent = op->matched_bytes;
  group_->release_op(op);
  r.active = false;
  if (truncated)
    throw TransportError("message truncated: peer sent " + std::to_string(sent) + " bytes into a " +
                             std::to_string(r.bytes) + "-byte receive",
                         error_context(&r));
}

void ThreadTransport::barrier() {
  ThreadGroup& g = *group_;
  std::unique_lock lk(world_.mu_);
  const long gen = g.barrier_generation;
  if (++g.barrier_waiting == g.size()) {
    g.barrier_waiting = 0;
    ++g.barrier_generation;
    world_.cv_.notify_all();
    return;
  }
  lk.unlock();
  spin_until(spin_, [&g, gen] { return g.barrier_generation.load(std::memory_order_acquire) != gen; });
  lk.lock();
  Deadline deadline(scope(), Deadline::kEveryPoll);
  while (g.barrier_generation == gen) {
    if (world_.failed_rank_ >= 0) throw_peer_failed("during a barrier", nullptr);
    if (world_.cv_.wait_until(lk, deadline.at()) == std::cv_status::timeout && g.barrier_generation == gen)
      throw TimeoutError("timed out in barrier (" + std::to_string(g.size() - g.barrier_waiting) +
                             " rank(s) never arrived)",
                         error_context());
  }
}

std::unique_ptr<Transport> ThreadTransport::make_split(std::string_view name, int color, int key) {
  ThreadGroup& g = *group_;
  std::unique_lock lk(world_.mu_);
  const long gen = g.split_generation;
  g.split_colors[rank_] = color < 0 ? kNoColor : color;
  g.split_keys[rank_] = key;
  if (++g.split_arrived == g.size()) {
    g.split_arrived = 0;
    std::fill(g.split_groups.begin(), g.split_groups.end(), nullptr);
    for (int r = 0; r < g.size(); ++r) {
      if (g.split_colors[r] < 0 || g.split_groups[r]) continue;  // no group, or already formed
      const std::vector<int> members = split_members(g.split_colors, g.split_keys, g.split_colors[r]);
      std::vector<int> world_ranks;
      for (int m : members) world_ranks.push_back(g.world_ranks[m]);
      auto sub = std::make_shared<ThreadGroup>(std::move(world_ranks));
      for (std::size_t i = 0; i < members.size(); ++i) {
        g.split_groups[members[i]] = sub;
        g.split_ranks[members[i]] = static_cast<int>(i);
      }
    }
    ++g.split_generation;
    world_.cv_.notify_all();
  } else {
    Deadline deadline(scope(), Deadline::kEveryPoll);
    while (g.split_generation == gen) {
      if (world_.failed_rank_ >= 0) throw_peer_failed("during split '" + std::string(name) + "'", nullptr);
      if (world_.cv_.wait_until(lk, deadline.at()) == std::cv_status::timeout && g.split_generation == gen)
        throw TimeoutError("timed out in split '" + std::string(name) + "' (" +
                               std::to_string(g.size() - g.split_arrived) + " rank(s) never arrived)",
                           error_context());
    }
  }
  std::shared_ptr<ThreadGroup> sub = std::move(g.split_groups[rank_]);
  const int sub_rank = g.split_ranks[rank_];
  lk.unlock();
  if (!sub) return nullptr;
  std::unique_ptr<ThreadTransport> t(
      new ThreadTransport(world_, std::move(sub), sub_rank, shared_scope(), *memory_, std::string(name)));
  t->spin_ = spin_;
  return t;
  // (the spin below is the parent's)
}

}  // namespace collbench
