#pragma once
// Point-to-point over MPI_Isend/MPI_Irecv on a communicator the caller owns. Two ways to wait,
// chosen by the call scope:
//   watched (the harness runs a watchdog, harness/runtime/watchdog.hpp): MPI_Wait / MPI_Barrier
//     under a BlockingCall — a few stores per wait, no clock, no polling loop of ours; the
//     watchdog names rank and peer and ends the process when a wait outlives the timeout.
//   unwatched (library users, unit tests): poll MPI_Testall under a Deadline and throw
//     TimeoutError naming the peer; the harness then aborts the job (a blocked MPI call cannot
//     be cancelled portably). split() is MPI_Comm_split (on a quiet copy: quiet_comm.hpp);
// the sub-transport owns that communicator and frees it when destroyed (with its parent,
// which therefore must be destroyed before MPI_Finalize).
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collectives/transport/transport.hpp"

namespace collbench {

class MpiTransport final : public Transport {
 public:
  // Over `comm`, which the caller owns and keeps alive; under its own call scope by default.
  explicit MpiTransport(MPI_Comm comm, std::shared_ptr<CallScope> scope = std::make_shared<CallScope>());
  ~MpiTransport() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view backend() const override { return "mpi"; }
  MemorySpace& memory() override { return *memory_; }
  // Inline, so a caller holding the MpiTransport (final) posts a message for the cost of the
  // MPI call itself plus a few compares (bench/bench_overhead.cpp: transport_window vs raw_window).
  Request isend(const void* buf, std::size_t bytes, int peer, int tag) override {
    if (!plain_message(bytes, peer, tag)) [[unlikely]]
      return post_checked(const_cast<void*>(buf), bytes, peer, tag, true);
    MPI_Request mr;
    const int rc = MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm_, &mr);
    if (rc != MPI_SUCCESS) [[unlikely]]
      post_failed(rc, bytes, peer, tag, true);
    return Request{handle_of(mr), peer, tag, bytes, true, true};
  }
  Request irecv(void* buf, std::size_t bytes, int peer, int tag) override {
    if (!plain_message(bytes, peer, tag)) [[unlikely]]
      return post_checked(buf, bytes, peer, tag, false);
    MPI_Request mr;
    const int rc = MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm_, &mr);
    if (rc != MPI_SUCCESS) [[unlikely]]
      post_failed(rc, bytes, peer, tag, false);
    return Request{handle_of(mr), peer, tag, bytes, false, true};
  }
  // Bursts (osu_bw's window) post through the inline isend/irecv above: no virtual call per message.
  void isend_burst(const void* buf, std::size_t bytes, int peer, int tag, std::span<Request> out) override {
    for (Request& r : out) r = isend(buf, bytes, peer, tag);
  }
  void irecv_burst(void* first, std::size_t bytes, std::size_t stride, std::size_t slots, int peer, int tag,
                   std::span<Request> out) override {
    auto* base = static_cast<unsigned char*>(first);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = irecv(base + (i % slots) * stride, bytes, peer, tag);
  }
  // Watched: MPI_Send / MPI_Recv under a BlockingCall, as a plain MPI ping-pong (the eager
  // send needs no request); unwatched: isend/irecv + the polled wait.
  void send(const void* buf, std::size_t bytes, int peer, int tag) override;
  void recv(void* buf, std::size_t bytes, int peer, int tag) override;
  void wait(Request& r) override;
  void wait_all(std::span<Request> rs) override;
  void barrier() override;
  std::string_view split_name() const override { return name_; }
  int world_rank(int rank) const override;

  MPI_Comm comm() const { return comm_; }
  // Buffers of another space (e.g. CUDA staging) can be plugged in by the device layer.
  void set_memory(MemorySpace& m) { memory_ = &m; }

 protected:
  std::unique_ptr<Transport> make_split(std::string_view name, int color, int key) override;
  // MPI-3 shared windows (mpi_peer_memory.cpp), when every rank is in this rank's
  // MPI_COMM_TYPE_SHARED group.
  std::unique_ptr<PeerMemory> make_peer_memory() override;

 private:
  MpiTransport(MPI_Comm owned, const MpiTransport& parent, std::string name);
  [[noreturn]] void fail(int code, const char* call, const Request* r) const;
  // A message the inline path posts as is: a valid peer other than this rank, a valid tag,
  // at most INT_MAX bytes (MPI_BYTE counts are int).
  bool plain_message(std::size_t bytes, int peer, int tag) const {
    return static_cast<unsigned>(peer) < static_cast<unsigned>(size_) && peer != rank_ &&
           static_cast<unsigned>(tag) <= static_cast<unsigned>(kMaxTag) && bytes <= kMaxPlainBytes;
  }
  static std::uintptr_t handle_of(MPI_Request r) {
    static_assert(sizeof(MPI_Request) <= sizeof(std::uintptr_t), "MPI_Request must fit in Request::handle");
    std::uintptr_t h = 0;
    std::memcpy(&h, &r, sizeof r);
    return h;
  }
  // Out of line: the checks that throw, and messages over INT_MAX bytes (a derived type).
  Request post_checked(void* buf, std::size_t bytes, int peer, int tag, bool is_send);
  [[noreturn]] void post_failed(int code, std::size_t bytes, int peer, int tag, bool is_send) const;
  static constexpr std::size_t kMaxPlainBytes = INT_MAX;
  void wait_all_watched(std::span<Request> rs);
  void wait_all_polled(std::span<Request> rs);
  MPI_Comm comm_;
  bool owns_comm_ = false;  // sub-transports free their communicator
  int rank_ = 0;
  int size_ = 1;
  std::string name_;            // split name; empty for a root transport
  std::vector<int> world_ranks_;  // sub-transports: root-transport rank of each rank
  HostMemory host_;
  MemorySpace* memory_ = &host_;
  std::vector<MPI_Request> wait_buffer_;  // wait_all of more than 8 requests; grown, kept
};

// Turns an MPI return code into a TransportError with file:line, the call and the context.
#define COLLBENCH_MPI_CHECK(call, transport)                                                          \
  do {                                                                                               \
    int cb_rc_ = (call);                                                                             \
    if (cb_rc_ != MPI_SUCCESS) ::collbench::mpi_error(cb_rc_, #call, __FILE__, __LINE__, (transport)); \
  } while (0)

[[noreturn]] void mpi_error(int code, const char* call, const char* file, int line, const Transport* t);

inline constexpr const char* kBarrierWhat = "in barrier (some rank never arrived)";

}  // namespace collbench
