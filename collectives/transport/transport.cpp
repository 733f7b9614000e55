#include "collectives/transport/transport.hpp"

#include <algorithm>
#include <array>

namespace collbench {

Transport::Transport(std::shared_ptr<CallScope> scope) : scope_(std::move(scope)) {
  if (!scope_) throw Error("a transport needs a call scope (got a null std::shared_ptr<CallScope>)");
}

Transport::~Transport() { release_splits(); }

void Transport::release_splits() noexcept {
  peer_memory_.reset();
  // Newest first: a later split may have been made over an earlier one's ranks.
  while (!splits_.empty()) splits_.pop_back();
}

PeerMemory* Transport::peer_memory() {
  if (!peer_memory_made_) {
    peer_memory_ = make_peer_memory();
    peer_memory_made_ = true;
  }
  return peer_memory_.get();
}

Transport* Transport::split(std::string_view name, int color, int key) {
  for (const CachedSplit& s : splits_) {
    if (s.name != name) continue;
    if ((s.color < 0) != (color < 0) || (color >= 0 && (s.color != color || s.key != key)))
      throw Error("split '" + std::string(name) + "' was made with color " + std::to_string(s.color) + " key " +
                      std::to_string(s.key) + ", now asked for color " + std::to_string(color) + " key " +
                      std::to_string(key) + ": one split name must always mean the same partition",
                  error_context());
    return s.transport.get();
  }
  // A failed make_split caches nothing (the parent is unusable after a failed collective).
  std::unique_ptr<Transport> t = make_split(name, color, key);
  if (color < 0 && t) throw Error("make_split returned a transport for a negative color", error_context());
  if (color >= 0 && !t) throw Error("make_split returned no transport for color " + std::to_string(color), error_context());
  if (t) t->root_nodes_ = root_nodes_;
  splits_.push_back({std::string(name), color, key, std::move(t)});
  return splits_.back().transport.get();
}

bool Transport::has_split(std::string_view name) const {
  for (const CachedSplit& s : splits_)
    if (s.name == name) return true;
  return false;
}

void Transport::set_node_layout(const std::vector<int>& node_of_rank) {
  if (static_cast<int>(node_of_rank.size()) != size())
    throw Error(
        "node layout for " + std::to_string(node_of_rank.size()) + " ranks on a transport of " + std::to_string(size()),
        error_context());
  if (!split_name().empty() || !splits_.empty())
    throw Error("the node layout is set on a root transport, before any split", error_context());
  root_nodes_ = std::make_shared<const std::vector<int>>(node_of_rank);
  layout_.reset();
}

const patterns::NodeLayout& Transport::node_layout() const {
  if (!layout_) {
    std::vector<int> nodes(static_cast<std::size_t>(size()), 0);
    if (root_nodes_)
      for (int r = 0; r < size(); ++r)
        nodes[static_cast<std::size_t>(r)] = root_nodes_->at(static_cast<std::size_t>(world_rank(r)));
    layout_.emplace(nodes);
  }
  return *layout_;
}

std::vector<int> split_members(std::span<const int> colors, std::span<const int> keys, int color) {
  std::vector<int> members;
  if (color < 0) return members;
  for (int r = 0; r < static_cast<int>(colors.size()); ++r)
    if (colors[r] == color) members.push_back(r);
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return keys[a] < keys[b]; });
  return members;
}

void Transport::wait_all(std::span<Request> rs) {
  for (Request& r : rs) wait(r);
}

void Transport::isend_burst(const void* buf, std::size_t bytes, int peer, int tag, std::span<Request> out) {
  for (Request& r : out) r = isend(buf, bytes, peer, tag);
}

void Transport::irecv_burst(void* first, std::size_t bytes, std::size_t stride, std::size_t slots, int peer, int tag,
                            std::span<Request> out) {
  auto* base = static_cast<unsigned char*>(first);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = irecv(base + (i % slots) * stride, bytes, peer, tag);
}

void Transport::send(const void* buf, std::size_t bytes, int peer, int tag) {
  Request r = isend(buf, bytes, peer, tag);
  wait(r);
}

void Transport::recv(void* buf, std::size_t bytes, int peer, int tag) {
  Request r = irecv(buf, bytes, peer, tag);
  wait(r);
}

void Transport::sendrecv(const void* sbuf, std::size_t sbytes, int to, void* rbuf, std::size_t rbytes, int from,
                         int tag) {
  std::array<Request, 2> rs{irecv(rbuf, rbytes, from, tag), isend(sbuf, sbytes, to, tag)};
  wait_all(rs);
}

ErrorContext Transport::error_context(const Request* r) const {
  ErrorContext c;
  c.call = scope_->call();
  c.rank = rank();
  if (r) {
    c.peer = r->peer;
    c.tag = r->tag;
    c.bytes = r->bytes;
  }
  const std::string_view name = split_name();
  if (!name.empty()) {
    c.split = name;
    c.world_rank = world_rank(c.rank);
    if (c.peer >= 0 && c.peer < size()) c.world_peer = world_rank(c.peer);
  }
  return c;
}

void Transport::check_peer(int peer, const char* what) const {
  if (peer < 0 || peer >= size() || peer == rank()) {
    ErrorContext c = error_context();
    c.peer = peer;
    if (!c.split.empty() && peer >= 0 && peer < size()) c.world_peer = world_rank(peer);
    throw Error(std::string(what) + ": invalid peer (world size " + std::to_string(size()) + ")", c);
  }
}

void Transport::check_tag(int tag) const {
  if (tag < 0 || tag > kMaxTag) {
    ErrorContext c = error_context();
    c.tag = tag;
    throw Error("tag out of range [0, 32767]", c);
  }
}

}  // namespace collbench
