// Peer memory over MPI-3 shared windows: one MPI_Win_allocate_shared per block on the
// transport's ranks, each rank's segment found with MPI_Win_shared_query. Only when every rank
// of the transport shares this rank's node (MPI_COMM_TYPE_SHARED), which is how Open MPI sees
// nodes (emulated nodes with their own hostnames are separate nodes). The windows stay in a
// passive-target epoch (MPI_Win_lock_all with MPI_MODE_NOCHECK) for their whole life, the
// usual form for direct load/store; ordering between ranks is the flags' acquire/release.
#include <exception>

#include "collectives/backends/mpi/mpi_transport.hpp"
#include "collectives/backends/mpi/quiet_comm.hpp"

namespace collbench {
namespace {

class MpiPeerMemory final : public PeerMemory {
 public:
  MpiPeerMemory(MpiTransport& t, MPI_Comm shared) : PeerMemory(t), t_(t), comm_(shared) {}
  ~MpiPeerMemory() override {
    release();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }

 protected:
  Mapping map(std::size_t bytes) override {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each segment on its owner's NUMA node
    void* mine = nullptr;
    MPI_Win win = MPI_WIN_NULL;
    {
      const BlockingCall blocking(t_.scope(), &t_, "in MPI_Win_allocate_shared");
      const int rc = mpi::on_quiet_copy(comm_, [&](MPI_Comm c) {  // the window copies its communicator
        return MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, c, &mine, &win);
      });
      MPI_Info_free(&info);
      COLLBENCH_MPI_CHECK(rc, &t_);
    }
    Mapping m;
    m.handle = static_cast<std::uintptr_t>(MPI_Win_c2f(win));
    for (int r = 0; r < size(); ++r) {
      MPI_Aint got = 0;
      int unit = 0;
      void* base = nullptr;
      COLLBENCH_MPI_CHECK(MPI_Win_shared_query(win, r, &got, &unit, &base), &t_);
      m.base.push_back(static_cast<std::byte*>(base));
    }
    COLLBENCH_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win), &t_);
    return m;
  }

  void unmap(Mapping& m) noexcept override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    // Unwinding an error (a peer that never raised its flag): a collective free would wait for
    // that peer and hide the error behind its own timeout. The process is ending: leave it.
    if (finalized || std::uncaught_exceptions() > 0) return;
    MPI_Win win = MPI_Win_f2c(static_cast<MPI_Fint>(m.handle));
    MPI_Win_unlock_all(win);
    const BlockingCall blocking(t_.scope(), &t_, "in MPI_Win_free");
    MPI_Win_free(&win);  // collective: no rank frees a segment a peer still reads
  }

 private:
  MpiTransport& t_;
  MPI_Comm comm_;
};

}  // namespace

std::unique_ptr<PeerMemory> MpiTransport::make_peer_memory() {
  MPI_Comm shared = MPI_COMM_NULL;
  {
    const BlockingCall blocking(scope(), this, "in MPI_Comm_split_type");
    const int rc = mpi::quiet_split_shared(comm_, rank_, &shared);
    if (rc != MPI_SUCCESS) fail(rc, "MPI_Comm_split_type", nullptr);
  }
  int n = 0;
  MPI_Comm_size(shared, &n);
  // Every rank sees the same answer: either all share one node or each group is smaller.
  if (n != size_) {
    MPI_Comm_free(&shared);
    return nullptr;
  }
  return std::make_unique<MpiPeerMemory>(*this, shared);
}

}  // namespace collbench
