#include "collectives/gpu/ordered_transport.hpp"

namespace collbench::gpu {

Request StreamOrderedTransport::isend(const void* buf, std::size_t bytes, int peer, int tag) {
  if (bytes) device_.synchronize();  // the kernels/copies that produced `buf` have finished
  return inner().isend(buf, bytes, peer, tag);
}

std::unique_ptr<Transport> StreamOrderedTransport::wrap(Transport& inner_sub) {
  return std::make_unique<StreamOrderedTransport>(inner_sub, device_);
}

}  // namespace collbench::gpu
