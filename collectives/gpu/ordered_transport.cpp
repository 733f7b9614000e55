#include "collectives/gpu/ordered_transport.hpp"

namespace collbench::gpu {

Request StreamOrderedTransport::isend(const void* buf, std::size_t bytes, int peer, int tag) {
  if (bytes) device().synchronize();  // the kernels/copies that produced `buf` have finished
  return inner().isend(buf, bytes, peer, tag);
}

Request StreamOrderedTransport::irecv(void* buf, std::size_t bytes, int peer, int tag) {
  // The library writes `buf` whenever the message arrives, outside the stream: kernels and
  // copies queued before still reading or writing it (the reduce of the previous unit in a
  // ring scratch slot) must have finished.
  if (bytes) device().synchronize();
  return inner().irecv(buf, bytes, peer, tag);
}

std::unique_ptr<Transport> StreamOrderedTransport::wrap(Transport& inner_sub) {
  return std::make_unique<StreamOrderedTransport>(inner_sub, device(), ipc());
}

}  // namespace collbench::gpu
