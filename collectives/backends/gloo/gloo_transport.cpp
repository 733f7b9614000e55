#include "collectives/backends/gloo/gloo_transport.hpp"

#include <gloo/common/error.h>
#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include <algorithm>
#include <cstring>

#include "collectives/backends/gloo/gloo_mesh.hpp"

namespace collbench {
namespace {

using gloo::transport::UnboundBuffer;

// Slots above every algorithm tag: the transport's own traffic.
constexpr std::uint64_t kBarrierSlot = Transport::kMaxTag + 1;
constexpr std::uint64_t kSplitSlot = Transport::kMaxTag + 2;      // colors and keys
constexpr std::uint64_t kAddressSlot = Transport::kMaxTag + 3;    // a new context's pair addresses

UnboundBuffer* buffer_of(const Request& r) { return reinterpret_cast<UnboundBuffer*>(r.handle); }

bool timed_out(const std::exception& e) { return std::strstr(e.what(), "Timed out") != nullptr; }

}  // namespace

GlooTransport::GlooTransport(std::shared_ptr<gloo::Context> context, std::shared_ptr<gloo::transport::Device> device,
                             std::shared_ptr<CallScope> scope, std::string name, std::vector<int> world_ranks,
                             MemorySpace* memory)
    : Transport(std::move(scope)),
      context_(std::move(context)),
      device_(std::move(device)),
      rank_(context_->rank),
      size_(context_->size),
      name_(std::move(name)),
      world_ranks_(std::move(world_ranks)),
      memory_(memory ? memory : &own_memory_) {}

GlooTransport::~GlooTransport() {
  release_splits();
  for (UnboundBuffer* b : live_) delete b;  // before the context they belong to
}

std::uintptr_t GlooTransport::adopt(std::unique_ptr<UnboundBuffer> b) {
  live_.insert(b.get());
  return reinterpret_cast<std::uintptr_t>(b.release());
}

void GlooTransport::release(std::uintptr_t handle) noexcept {
  auto* b = reinterpret_cast<UnboundBuffer*>(handle);
  live_.erase(b);
  delete b;
}

int GlooTransport::world_rank(int rank) const {
  return world_ranks_.empty() ? rank : world_ranks_.at(static_cast<std::size_t>(rank));
}

void GlooTransport::post_failed(const char* what, const std::exception& e, const Request& r) {
  throw TransportError(std::string("Gloo ") + what + " failed: " + e.what(), error_context(&r));
}

Request GlooTransport::isend(const void* buf, std::size_t bytes, int peer, int tag) {
  check_peer(peer, "isend");
  check_tag(tag);
  Request r{0, peer, tag, bytes, true, true};
  try {
    auto ub = context_->createUnboundBuffer(const_cast<void*>(buf), bytes);
    ub->send(peer, static_cast<std::uint64_t>(tag), 0, bytes);
    r.handle = adopt(std::move(ub));
  } catch (const gloo::Exception& e) {
    post_failed("send", e, r);
  }
  return r;
}

Request GlooTransport::irecv(void* buf, std::size_t bytes, int peer, int tag) {
  check_peer(peer, "irecv");
  check_tag(tag);
  Request r{0, peer, tag, bytes, false, true};
  try {
    auto ub = context_->createUnboundBuffer(buf, bytes);
    ub->recv(peer, static_cast<std::uint64_t>(tag), 0, bytes);
    r.handle = adopt(std::move(ub));
  } catch (const gloo::Exception& e) {
    post_failed("recv", e, r);
  }
  return r;
}

// Gloo's waits take a timeout: the scope's time left.
void GlooTransport::wait(Request& r) {
  if (!r.active) return;
  UnboundBuffer* ub = buffer_of(r);
  Deadline deadline(scope(), Deadline::kEveryPoll, this);
  deadline.message(r.peer, r.tag, r.bytes, r.is_send);
  const auto left = std::max(std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                               deadline.at() - Deadline::Clock::now()));
  try {
    if (r.is_send) ub->waitSend(left);
    else ub->waitRecv(left);
  } catch (const gloo::Exception& e) {
    r.active = false;
    release(r.handle);
    if (timed_out(e)) throw TimeoutError(timeout_message(deadline.timeout(), r.peer, r.is_send, ""), error_context(&r));
    throw TransportError("rank " + std::to_string(world_rank(r.peer)) +
                             "'s connection failed (it exited or was killed?): " + e.what(),
                         error_context(&r));
  }
  release(r.handle);
  r.active = false;
}

// Dissemination: log2(n) rounds of one byte to rank + 2^k, from rank - 2^k.
void GlooTransport::barrier() {
  char out = 0, in = 0;
  for (int d = 1; d < size_; d *= 2) {
    Request rs[2];
    try {
      auto recv = context_->createUnboundBuffer(&in, 1);
      auto send = context_->createUnboundBuffer(&out, 1);
      const int from = (rank_ - d + size_) % size_, to = (rank_ + d) % size_;
      recv->recv(from, kBarrierSlot);
      send->send(to, kBarrierSlot);
      rs[0] = Request{adopt(std::move(recv)), from, -1, 1, false, true};
      rs[1] = Request{adopt(std::move(send)), to, -1, 1, true, true};
    } catch (const gloo::Exception& e) {
      post_failed("barrier", e, rs[0]);
    }
    wait(rs[0]);
    wait(rs[1]);
  }
}

std::vector<std::vector<char>> GlooTransport::exchange(const std::vector<int>& members, const std::vector<char>& mine,
                                                       std::uint64_t slot) {
  // Linear: the length, then the bytes, to and from every other member (a few small messages,
  // made once per split, never timed).
  const std::size_t n = members.size();
  std::vector<std::vector<char>> all(n);
  std::vector<std::uint64_t> lengths(n, 0);
  const std::uint64_t my_length = mine.size();
  auto round = [&](auto&& post_recv, auto&& post_send) {
    std::vector<std::unique_ptr<UnboundBuffer>> bufs;
    for (std::size_t i = 0; i < n; ++i)
      if (members[i] != rank_) bufs.push_back(post_recv(i));
    for (std::size_t i = 0; i < n; ++i)
      if (members[i] != rank_) bufs.push_back(post_send(i));
    for (std::size_t k = 0; k < bufs.size(); ++k) {
      Request r{reinterpret_cast<std::uintptr_t>(bufs[k].get()), -1, -1, 0, k >= bufs.size() / 2, true};
      try {
        Deadline deadline(scope(), Deadline::kEveryPoll, this);
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline.at() - Deadline::Clock::now());
        if (r.is_send) bufs[k]->waitSend(std::max(left, std::chrono::milliseconds(1)));
        else bufs[k]->waitRecv(std::max(left, std::chrono::milliseconds(1)));
      } catch (const gloo::Exception& e) {
        throw TransportError(std::string("Gloo: swapping a new context's addresses failed: ") + e.what(), error_context());
      }
    }
  };
  try {
    round(
        [&](std::size_t i) {
          auto b = context_->createUnboundBuffer(&lengths[i], sizeof(std::uint64_t));
          b->recv(members[i], slot);
          return b;
        },
        [&](std::size_t i) {
          auto b = context_->createUnboundBuffer(const_cast<std::uint64_t*>(&my_length), sizeof(std::uint64_t));
          b->send(members[i], slot);
          return b;
        });
    for (std::size_t i = 0; i < n; ++i) {
      if (members[i] == rank_) all[i] = mine;
      else if (lengths[i] > (1u << 24)) throw TransportError("Gloo: rank " + std::to_string(members[i]) + " announced " + std::to_string(lengths[i]) + " address bytes", error_context());
      else all[i].resize(lengths[i]);
    }
    round(
        [&](std::size_t i) {
          auto b = context_->createUnboundBuffer(all[i].data(), all[i].size());
          b->recv(members[i], slot);
          return b;
        },
        [&](std::size_t i) {
          auto b = context_->createUnboundBuffer(const_cast<char*>(mine.data()), mine.size());
          b->send(members[i], slot);
          return b;
        });
  } catch (const gloo::Exception& e) {
    throw TransportError(std::string("Gloo: swapping a new context's addresses failed: ") + e.what(), error_context());
  }
  return all;
}

std::shared_ptr<gloo::Context> GlooTransport::connect_context() {
  std::vector<int> everyone(static_cast<std::size_t>(size_));
  for (int i = 0; i < size_; ++i) everyone[static_cast<std::size_t>(i)] = i;
  return gloo_mesh::connect(rank_, size_, device_, [&](const std::vector<char>& mine) { return exchange(everyone, mine, kAddressSlot); },
                            scope().timeout());
}

const std::shared_ptr<gloo::Context>& GlooTransport::library_context(int which) {
  auto& c = library_[which == 0 ? 0 : 1];
  if (!c) c = connect_context();
  return c;
}

std::unique_ptr<Transport> GlooTransport::make_split(std::string_view name, int color, int key) {
  std::vector<int> everyone(static_cast<std::size_t>(size_));
  for (int i = 0; i < size_; ++i) everyone[static_cast<std::size_t>(i)] = i;
  std::vector<char> mine(2 * sizeof(int));
  std::memcpy(mine.data(), &color, sizeof color);
  std::memcpy(mine.data() + sizeof color, &key, sizeof key);
  const auto all = exchange(everyone, mine, kSplitSlot);
  std::vector<int> colors(all.size()), keys(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].size() != mine.size()) throw TransportError("Gloo split: rank " + std::to_string(i) + " sent a malformed color", error_context());
    std::memcpy(&colors[i], all[i].data(), sizeof(int));
    std::memcpy(&keys[i], all[i].data() + sizeof(int), sizeof(int));
  }
  if (color < 0) return nullptr;
  const std::vector<int> members = split_members(colors, keys, color);
  const int sub_rank = static_cast<int>(std::find(members.begin(), members.end(), rank_) - members.begin());
  auto ctx = gloo_mesh::connect(sub_rank, static_cast<int>(members.size()), device_,
                                [&](const std::vector<char>& m) { return exchange(members, m, kAddressSlot); }, scope().timeout());
  std::vector<int> world(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) world[i] = world_rank(members[i]);
  return std::make_unique<GlooTransport>(std::move(ctx), device_, shared_scope(), std::string(name), std::move(world), memory_);
}

}  // namespace collbench
