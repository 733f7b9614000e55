#pragma once
// The base of every wrapper transport (stream ordering, host staging, test fault injection):
// forwards every call to an inner transport and shares its call scope, so the harness sets
// the scope once and errors raised by the inner name the same call. A wrapper overrides only
// what it changes; ForwardingTransport itself, with nothing overridden, behaves exactly like
// its inner transport (tests/transport/test_forwarding_transport.cpp).
//
// Splits: make_split splits the inner (through its cache, under the same name) and wraps the
// inner sub-transport with wrap(), which a wrapper overrides to wrap it the same way it wraps
// its own inner (or to throw NotSupported where that is impossible).
#include <memory>

#include "collectives/transport/transport.hpp"

namespace collbench {

class ForwardingTransport : public Transport {
 public:
  // `inner` must outlive this transport.
  explicit ForwardingTransport(Transport& inner) : Transport(inner.shared_scope()), inner_(inner) {}

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string_view backend() const override { return inner_.backend(); }
  MemorySpace& memory() override { return inner_.memory(); }
  Request isend(const void* buf, std::size_t bytes, int peer, int tag) override {
    return inner_.isend(buf, bytes, peer, tag);
  }
  Request irecv(void* buf, std::size_t bytes, int peer, int tag) override { return inner_.irecv(buf, bytes, peer, tag); }
  void wait(Request& r) override { inner_.wait(r); }
  void wait_all(std::span<Request> rs) override { inner_.wait_all(rs); }
  void barrier() override { inner_.barrier(); }
  std::string_view split_name() const override { return inner_.split_name(); }
  int world_rank(int rank) const override { return inner_.world_rank(rank); }
  void set_node_layout(const std::vector<int>& node_of_rank) override { inner_.set_node_layout(node_of_rank); }
  const patterns::NodeLayout& node_layout() const override { return inner_.node_layout(); }
  // The inner's. The device wrappers (gpu::DeviceTransport) override it with device peer
  // memory over the inner's; algorithms check that the kinds match.
  PeerMemory* peer_memory() override { return inner_.peer_memory(); }

  Transport& inner() const { return inner_; }

 protected:
  std::unique_ptr<Transport> make_split(std::string_view name, int color, int key) override;
  // This wrapper around `inner_sub` (a sub-transport of inner(), owned by its cache).
  virtual std::unique_ptr<Transport> wrap(Transport& inner_sub);

 private:
  Transport& inner_;
};

}  // namespace collbench
