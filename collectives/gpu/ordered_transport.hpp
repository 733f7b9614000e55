#pragma once
// A transport whose library reads device buffers itself (CUDA-aware MPI) knows nothing of
// the memory space's stream: a send posted right after a reduce kernel would read the buffer
// before the kernel ran. This wrapper synchronizes the memory space before every send and
// otherwise forwards. (Receives need nothing: the library completes them with the data in
// place, and the algorithm touches a receive buffer only after waiting.)
#include "collectives/transport/transport.hpp"

namespace collbench::gpu {

class StreamOrderedTransport final : public Transport {
 public:
  // `inner` must already move buffers of `device` (e.g. MpiTransport::set_memory(device)).
  StreamOrderedTransport(Transport& inner, MemorySpace& device);
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string_view backend() const override { return inner_.backend(); }
  MemorySpace& memory() override { return device_; }
  Request isend(const void* buf, std::size_t bytes, int peer, int tag) override;
  Request irecv(void* buf, std::size_t bytes, int peer, int tag) override;
  void wait(Request& r) override;
  void wait_all(std::span<Request> rs) override;
  void barrier() override;

 private:
  Transport& inner_;
  MemorySpace& device_;
};

}  // namespace collbench::gpu
