#include "collectives/gpu/ordered_transport.hpp"

#include "collectives/gpu/staging_transport.hpp"  // mirror_settings

namespace collbench::gpu {

StreamOrderedTransport::StreamOrderedTransport(Transport& inner, MemorySpace& device) : inner_(inner), device_(device) {
  set_timeout(inner.timeout());
  set_context(inner.context());
}

Request StreamOrderedTransport::isend(const void* buf, std::size_t bytes, int peer, int tag) {
  mirror_settings(*this, inner_);
  if (bytes) device_.synchronize();  // the kernels/copies that produced `buf` have finished
  return inner_.isend(buf, bytes, peer, tag);
}

Request StreamOrderedTransport::irecv(void* buf, std::size_t bytes, int peer, int tag) {
  mirror_settings(*this, inner_);
  return inner_.irecv(buf, bytes, peer, tag);
}

void StreamOrderedTransport::wait(Request& r) {
  mirror_settings(*this, inner_);
  inner_.wait(r);
}

void StreamOrderedTransport::wait_all(std::span<Request> rs) {
  mirror_settings(*this, inner_);
  inner_.wait_all(rs);
}

void StreamOrderedTransport::barrier() {
  mirror_settings(*this, inner_);
  inner_.barrier();
}

}  // namespace collbench::gpu
