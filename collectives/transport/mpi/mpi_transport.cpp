#include "collectives/transport/mpi/mpi_transport.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

namespace collbench {
namespace {

static_assert(sizeof(MPI_Request) <= sizeof(std::uintptr_t), "MPI_Request must fit in Request::handle");

MPI_Request to_mpi(std::uintptr_t h) {
  MPI_Request r;
  std::memcpy(&r, &h, sizeof r);
  return r;
}
std::uintptr_t from_mpi(MPI_Request r) {
  std::uintptr_t h = 0;
  std::memcpy(&h, &r, sizeof r);
  return h;
}

std::string mpi_error_string(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(buf, len);
}

// A message as (count, datatype). Up to INT_MAX bytes: MPI_BYTE. Larger (MPI 3 counts are
// int): a derived type of whole MiB blocks plus the remainder, made for this message and
// freed right after posting (MPI keeps it alive until the operation completes). So every
// rank can send any size an algorithm asks for, instead of some ranks failing mid-algorithm.
struct Span {
  int count = 0;
  MPI_Datatype type = MPI_BYTE;
  bool derived = false;
  ~Span() {
    if (derived) MPI_Type_free(&type);
  }
};

void make_span(std::size_t bytes, Span& s) {
  if (bytes <= static_cast<std::size_t>(INT_MAX)) {
    s.count = static_cast<int>(bytes);
    return;
  }
  constexpr std::size_t kBlock = 1 << 20;
  MPI_Datatype block;
  MPI_Type_contiguous(static_cast<int>(kBlock), MPI_BYTE, &block);
  const int lengths[2] = {static_cast<int>(bytes / kBlock), static_cast<int>(bytes % kBlock)};
  const MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(bytes / kBlock * kBlock)};
  const MPI_Datatype types[2] = {block, MPI_BYTE};
  MPI_Type_create_struct(lengths[1] ? 2 : 1, lengths, displs, types, &s.type);
  MPI_Type_commit(&s.type);
  MPI_Type_free(&block);
  s.count = 1;
  s.derived = true;
}

}  // namespace

void mpi_error(int code, const char* call, const char* file, int line, const Transport* t) {
  ErrorContext c = t ? t->error_context() : ErrorContext{};
  throw TransportError(std::string(call) + " failed: " + mpi_error_string(code) + " [" + file + ":" +
                           std::to_string(line) + "]",
                       c);
}

MpiTransport::MpiTransport(MPI_Comm comm, std::shared_ptr<CallScope> scope) : Transport(std::move(scope)), comm_(comm) {
  // Errors come back as codes so we can name the peer instead of aborting inside MPI.
  COLLBENCH_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), nullptr);
  COLLBENCH_MPI_CHECK(MPI_Comm_rank(comm_, &rank_), nullptr);
  COLLBENCH_MPI_CHECK(MPI_Comm_size(comm_, &size_), nullptr);
}

MpiTransport::MpiTransport(MPI_Comm owned, const MpiTransport& parent, std::string name)
    : Transport(parent.shared_scope()), comm_(owned), owns_comm_(true), name_(std::move(name)), memory_(parent.memory_) {
  try {
    COLLBENCH_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), &parent);
    COLLBENCH_MPI_CHECK(MPI_Comm_rank(comm_, &rank_), &parent);
    COLLBENCH_MPI_CHECK(MPI_Comm_size(comm_, &size_), &parent);
    // Root-transport ranks of this communicator's ranks, through the parent's own mapping.
    MPI_Group mine, theirs;
    COLLBENCH_MPI_CHECK(MPI_Comm_group(comm_, &mine), &parent);
    COLLBENCH_MPI_CHECK(MPI_Comm_group(parent.comm_, &theirs), &parent);
    std::vector<int> ranks(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) ranks[r] = r;
    world_ranks_.resize(ranks.size());
    const int rc = MPI_Group_translate_ranks(mine, size_, ranks.data(), theirs, world_ranks_.data());
    MPI_Group_free(&mine);
    MPI_Group_free(&theirs);
    COLLBENCH_MPI_CHECK(rc, &parent);
    for (int& w : world_ranks_) w = parent.world_rank(w);
  } catch (...) {
    MPI_Comm_free(&comm_);
    throw;
  }
}

MpiTransport::~MpiTransport() {
  release_splits();  // sub-communicators before this one
  if (!owns_comm_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

int MpiTransport::world_rank(int rank) const {
  return world_ranks_.empty() ? rank : world_ranks_[static_cast<std::size_t>(rank)];
}

std::unique_ptr<Transport> MpiTransport::make_split(std::string_view name, int color, int key) {
  MPI_Comm sub = MPI_COMM_NULL;
  {
    // MPI_Comm_split cannot be polled; the Deadline still tells a watchdog it is running.
    const Deadline blocking(scope());
    const int rc = MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &sub);
    if (rc != MPI_SUCCESS) fail(rc, "MPI_Comm_split", nullptr);
  }
  if (sub == MPI_COMM_NULL) return nullptr;
  return std::unique_ptr<Transport>(new MpiTransport(sub, *this, std::string(name)));
}

void MpiTransport::fail(int code, const char* call, const Request* r) const {
  throw TransportError(std::string(call) + " failed: " + mpi_error_string(code), error_context(r));
}

Request MpiTransport::isend(const void* buf, std::size_t bytes, int peer, int tag) {
  check_peer(peer, "isend");
  check_tag(tag);
  Request r{0, peer, tag, bytes, true, true};
  MPI_Request mr;
  Span s;
  make_span(bytes, s);
  const int rc = MPI_Isend(buf, s.count, s.type, peer, tag, comm_, &mr);
  if (rc != MPI_SUCCESS) fail(rc, "MPI_Isend", &r);
  r.handle = from_mpi(mr);
  return r;
}

Request MpiTransport::irecv(void* buf, std::size_t bytes, int peer, int tag) {
  check_peer(peer, "irecv");
  check_tag(tag);
  Request r{0, peer, tag, bytes, false, true};
  MPI_Request mr;
  Span s;
  make_span(bytes, s);
  const int rc = MPI_Irecv(buf, s.count, s.type, peer, tag, comm_, &mr);
  if (rc != MPI_SUCCESS) fail(rc, "MPI_Irecv", &r);
  r.handle = from_mpi(mr);
  return r;
}

void MpiTransport::wait(Request& r) { wait_all(std::span<Request>(&r, 1)); }

void MpiTransport::wait_all(std::span<Request> rs) {
  // Nothing pending (a pipeline's empty slot, a completed request): no MPI call, no clock.
  if (std::none_of(rs.begin(), rs.end(), [](const Request& r) { return r.active; })) return;
  // MPI handles in a small fixed buffer (most algorithms wait on <= 8 requests at a time),
  // else in a member vector that only grows: no allocation on the timed path either way.
  MPI_Request local[8];
  MPI_Request* mrs = local;
  if (rs.size() > 8) {
    if (wait_buffer_.size() < rs.size()) wait_buffer_.resize(rs.size());
    mrs = wait_buffer_.data();
  }
  for (std::size_t i = 0; i < rs.size(); ++i) mrs[i] = rs[i].active ? to_mpi(rs[i].handle) : MPI_REQUEST_NULL;
  const int n = static_cast<int>(rs.size());
  Deadline deadline(scope());
  auto all_done = [&] {
    int flag = 0;
    const int rc = MPI_Testall(n, mrs, &flag, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
      // Name the first request that did not complete.
      for (std::size_t i = 0; i < rs.size(); ++i)
        if (mrs[i] != MPI_REQUEST_NULL) fail(rc, rs[i].is_send ? "MPI_Isend/wait" : "MPI_Irecv/wait", &rs[i]);
      fail(rc, "MPI_Testall", nullptr);
    }
    return flag != 0;
  };
  while (!deadline.poll(all_done)) {
    for (std::size_t i = 0; i < rs.size(); ++i) {
      if (mrs[i] == MPI_REQUEST_NULL) continue;
      // MPI_Testall may have completed some: find one still pending.
      int done = 0;
      MPI_Request probe = mrs[i];
      MPI_Request_get_status(probe, &done, MPI_STATUS_IGNORE);
      if (done) continue;
      throw TimeoutError("timed out after " + std::to_string(deadline.timeout().count()) + " ms waiting for " +
                             (rs[i].is_send ? "peer to receive from rank " : "message from peer ") +
                             std::to_string(rs[i].peer),
                         error_context(&rs[i]));
    }
    // All completed just as the deadline passed: the next poll's MPI_Testall returns them.
  }
  for (auto& r : rs) r.active = false;
}

void MpiTransport::barrier() {
  // Non-blocking barrier so the timeout applies here too.
  MPI_Request mr;
  int rc = MPI_Ibarrier(comm_, &mr);
  if (rc != MPI_SUCCESS) fail(rc, "MPI_Ibarrier", nullptr);
  Deadline deadline(scope());
  const bool arrived = deadline.poll([&] {
    int flag = 0;
    const int trc = MPI_Test(&mr, &flag, MPI_STATUS_IGNORE);
    if (trc != MPI_SUCCESS) fail(trc, "MPI_Ibarrier/test", nullptr);
    return flag != 0;
  });
  if (!arrived)
    throw TimeoutError("timed out after " + std::to_string(deadline.timeout().count()) +
                           " ms in barrier (some rank never arrived)",
                       error_context());
}

}  // namespace collbench
