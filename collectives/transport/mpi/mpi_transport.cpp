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

MpiTransport::MpiTransport(MPI_Comm comm) : comm_(comm) {
  // Errors come back as codes so we can name the peer instead of aborting inside MPI.
  COLLBENCH_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), nullptr);
  COLLBENCH_MPI_CHECK(MPI_Comm_rank(comm_, &rank_), nullptr);
  COLLBENCH_MPI_CHECK(MPI_Comm_size(comm_, &size_), nullptr);
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
  const auto deadline = Clock::now() + timeout();
  for (unsigned spins = 0;; ++spins) {
    int flag = 0;
    const int rc = MPI_Testall(n, mrs, &flag, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
      // Name the first request that did not complete.
      for (std::size_t i = 0; i < rs.size(); ++i)
        if (mrs[i] != MPI_REQUEST_NULL) fail(rc, rs[i].is_send ? "MPI_Isend/wait" : "MPI_Irecv/wait", &rs[i]);
      fail(rc, "MPI_Testall", nullptr);
    }
    if (flag) break;
    // Reading the clock costs ~20 ns; check it every 256 polls only.
    if ((spins & 255u) == 255u && Clock::now() > deadline) {
      for (std::size_t i = 0; i < rs.size(); ++i) {
        if (mrs[i] == MPI_REQUEST_NULL) continue;
        // MPI_Testall may have completed some: find one still pending.
        int done = 0;
        MPI_Request probe = mrs[i];
        MPI_Request_get_status(probe, &done, MPI_STATUS_IGNORE);
        if (done) continue;
        throw TimeoutError("timed out after " + std::to_string(timeout().count()) + " ms waiting for " +
                               (rs[i].is_send ? "peer to receive from rank " : "message from peer ") +
                               std::to_string(rs[i].peer),
                           error_context(&rs[i]));
      }
    }
  }
  for (auto& r : rs) r.active = false;
}

void MpiTransport::barrier() {
  // Non-blocking barrier so the timeout applies here too.
  MPI_Request mr;
  int rc = MPI_Ibarrier(comm_, &mr);
  if (rc != MPI_SUCCESS) fail(rc, "MPI_Ibarrier", nullptr);
  const auto deadline = Clock::now() + timeout();
  for (unsigned spins = 0;; ++spins) {
    int flag = 0;
    rc = MPI_Test(&mr, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) fail(rc, "MPI_Ibarrier/test", nullptr);
    if (flag) return;
    if ((spins & 255u) == 255u && Clock::now() > deadline)
      throw TimeoutError("timed out after " + std::to_string(timeout().count()) +
                             " ms in barrier (some rank never arrived)",
                         error_context());
  }
}

}  // namespace collbench
