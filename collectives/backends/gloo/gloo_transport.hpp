#pragma once
// Point-to-point over Gloo's TCP transport: each isend/irecv is one unbound buffer
// (createUnboundBuffer + send/recv to a peer and slot, then waitSend/waitRecv), the API
// PyTorch's ProcessGroupGloo uses for send/recv. Tags are slots 0..kMaxTag; the transport's own
// barrier and split messages use slots above them, and Gloo's collectives (gloo_library.cpp)
// run on contexts of their own (library_context), so no traffic can match another's.
//
// Waits are self-timed (Gloo's own timeout = the call scope's time left): a dead peer's
// closed socket or a timeout throws TransportError / TimeoutError naming the peer.
// split() connects a new Gloo context among the group's ranks, swapping its pair addresses
// over this transport.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "collectives/transport/transport.hpp"

namespace gloo {
class Context;
namespace transport {
class Device;
class UnboundBuffer;
}  // namespace transport
}  // namespace gloo

namespace collbench {

class GlooTransport final : public Transport {
 public:
  // Over `context` (connected, its ranks the transport's), making sub-contexts on `device`.
  // `world_ranks` maps this transport's ranks to the root's (empty for a root); a
  // sub-transport uses its root's `memory`.
  GlooTransport(std::shared_ptr<gloo::Context> context, std::shared_ptr<gloo::transport::Device> device,
                std::shared_ptr<CallScope> scope, std::string name = {}, std::vector<int> world_ranks = {},
                MemorySpace* memory = nullptr);
  ~GlooTransport() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view backend() const override { return "gloo"; }
  MemorySpace& memory() override { return *memory_; }
  Request isend(const void* buf, std::size_t bytes, int peer, int tag) override;
  Request irecv(void* buf, std::size_t bytes, int peer, int tag) override;
  void wait(Request& r) override;
  void barrier() override;
  std::string_view split_name() const override { return name_; }
  int world_rank(int rank) const override;

  // The context the transport's messages use, and a context for Gloo's collectives over the
  // same ranks: `which` 0 for the options API (gloo::allreduce(opts), ... as ProcessGroupGloo
  // calls them), 1 for the algorithm classes (gloo::AllreduceRing, ...), which take slots from
  // the context's counter: on a context shared with tagged calls their small slots collide and
  // ran ~100x slower. Made on first use: collective, call it on every rank outside timed calls.
  gloo::Context& context() { return *context_; }
  const std::shared_ptr<gloo::Context>& library_context(int which);
  // The next tag of a Gloo collective on library_context(0), as ProcessGroupGloo's nextTag().
  std::uint32_t next_library_tag() { return library_tag_++; }

  // A new context over this transport's ranks on its device (collective), its addresses
  // swapped by this transport's messages.
  std::shared_ptr<gloo::Context> connect_context();

 protected:
  std::unique_ptr<Transport> make_split(std::string_view name, int color, int key) override;

 private:
  // Every rank's bytes (index = rank in `members`, which holds this rank) over `slot`.
  std::vector<std::vector<char>> exchange(const std::vector<int>& members, const std::vector<char>& mine, std::uint64_t slot);
  void post_failed(const char* what, const std::exception& e, const Request& r);
  // A request's buffer: owned by the transport from its post until its wait (or the
  // transport's end, for requests a failed algorithm never waited for). Gloo's buffers may be
  // destroyed with an operation pending: their pairs hold only weak references to them.
  std::uintptr_t adopt(std::unique_ptr<gloo::transport::UnboundBuffer> b);
  void release(std::uintptr_t handle) noexcept;

  std::shared_ptr<gloo::Context> context_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> library_[2];
  std::uint32_t library_tag_ = 0;
  int rank_;
  int size_;
  std::string name_;
  std::vector<int> world_ranks_;
  std::unordered_set<gloo::transport::UnboundBuffer*> live_;  // posted, not yet waited for
  HostMemory own_memory_;
  MemorySpace* memory_;
};

}  // namespace collbench
