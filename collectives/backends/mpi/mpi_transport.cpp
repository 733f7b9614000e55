#include "collectives/backends/mpi/mpi_transport.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "collectives/backends/mpi/quiet_comm.hpp"

namespace collbench {
namespace {

MPI_Request to_mpi(std::uintptr_t h) {
  MPI_Request r;
  std::memcpy(&r, &h, sizeof r);
  return r;
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
    // MPI_Comm_split cannot be polled; a watchdog still sees it running.
    const BlockingCall blocking(scope(), this, "in MPI_Comm_split");
    const int rc = mpi::quiet_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &sub);
    if (rc != MPI_SUCCESS) fail(rc, "MPI_Comm_split", nullptr);
  }
  if (sub == MPI_COMM_NULL) return nullptr;
  return std::unique_ptr<Transport>(new MpiTransport(sub, *this, std::string(name)));
}

void MpiTransport::fail(int code, const char* call, const Request* r) const {
  throw TransportError(std::string(call) + " failed: " + mpi_error_string(code), error_context(r));
}

Request MpiTransport::post_checked(void* buf, std::size_t bytes, int peer, int tag, bool is_send) {
  const char* what = is_send ? "isend" : "irecv";
  if (static_cast<unsigned>(peer) >= static_cast<unsigned>(size_) || peer == rank_) check_peer(peer, what);
  if (static_cast<unsigned>(tag) > static_cast<unsigned>(kMaxTag)) check_tag(tag);
  Request r{0, peer, tag, bytes, is_send, true};
  MPI_Request mr;
  Span s;
  make_span(bytes, s);
  const int rc = is_send ? MPI_Isend(buf, s.count, s.type, peer, tag, comm_, &mr)
                         : MPI_Irecv(buf, s.count, s.type, peer, tag, comm_, &mr);
  if (rc != MPI_SUCCESS) post_failed(rc, bytes, peer, tag, is_send);
  r.handle = handle_of(mr);
  return r;
}

void MpiTransport::post_failed(int code, std::size_t bytes, int peer, int tag, bool is_send) const {
  const Request r{0, peer, tag, bytes, is_send, true};
  fail(code, is_send ? "MPI_Isend" : "MPI_Irecv", &r);
}

void MpiTransport::send(const void* buf, std::size_t bytes, int peer, int tag) {
  if (!scope().watched() || !plain_message(bytes, peer, tag)) return Transport::send(buf, bytes, peer, tag);
  BlockingCall call(scope(), this, "");
  call.message(peer, tag, bytes, true);
  const int rc = MPI_Send(buf, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm_);
  if (rc != MPI_SUCCESS) post_failed(rc, bytes, peer, tag, true);
}

void MpiTransport::recv(void* buf, std::size_t bytes, int peer, int tag) {
  if (!scope().watched() || !plain_message(bytes, peer, tag)) return Transport::recv(buf, bytes, peer, tag);
  BlockingCall call(scope(), this, "");
  call.message(peer, tag, bytes, false);
  const int rc = MPI_Recv(buf, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm_, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) post_failed(rc, bytes, peer, tag, false);
}

void MpiTransport::wait(Request& r) { wait_all(std::span<Request>(&r, 1)); }

void MpiTransport::wait_all(std::span<Request> rs) {
  if (scope().watched()) return wait_all_watched(rs);
  wait_all_polled(rs);
}

// Watched by the harness's watchdog: plain blocking MPI_Waitall / MPI_Wait — no clock, no
// Deadline, no polling loop of ours (with MPI_THREAD_SINGLE, Open MPI's waits are a bare
// progress spin: measured 5-10 ns per 8-byte message cheaper than polling MPI_Testall,
// bench/bench_overhead.cpp). The request waited for is published on the scope first, so a
// watchdog that sees this call stuck names it: requests to one peer (a ping-pong, a window of
// messages) are waited for at once, naming that peer; requests to several peers one by one,
// in order, so the one published is the first still pending (as the polled path names it).
void MpiTransport::wait_all_watched(std::span<Request> rs) {
  std::size_t first = 0;
  while (first < rs.size() && !rs[first].active) ++first;
  if (first == rs.size()) return;  // nothing pending: no MPI call, no store
  const Request& head = rs[first];
  bool one_peer = true;
  for (std::size_t i = first + 1; i < rs.size() && one_peer; ++i) one_peer = !rs[i].active || rs[i].peer == head.peer;
  BlockingCall call(scope(), this, "");
  call.message(head.peer, head.tag, head.bytes, head.is_send);
  if (one_peer && rs.size() - first > 1) {
    MPI_Request local[8];
    MPI_Request* mrs = local;
    const std::size_t n = rs.size() - first;
    if (n > 8) {
      if (wait_buffer_.size() < n) wait_buffer_.resize(n);
      mrs = wait_buffer_.data();
    }
    for (std::size_t i = 0; i < n; ++i) mrs[i] = rs[first + i].active ? to_mpi(rs[first + i].handle) : MPI_REQUEST_NULL;
    const int rc = MPI_Waitall(static_cast<int>(n), mrs, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
      for (std::size_t i = 0; i < n; ++i)
        if (mrs[i] != MPI_REQUEST_NULL)
          fail(rc, rs[first + i].is_send ? "MPI_Isend/wait" : "MPI_Irecv/wait", &rs[first + i]);
      fail(rc, "MPI_Waitall", &head);
    }
    for (std::size_t i = first; i < rs.size(); ++i) rs[i].active = false;
    return;
  }
  for (std::size_t i = first; i < rs.size(); ++i) {
    Request& r = rs[i];
    if (!r.active) continue;
    if (i != first) call.message(r.peer, r.tag, r.bytes, r.is_send);
    MPI_Request mr = to_mpi(r.handle);
    const int rc = MPI_Wait(&mr, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) fail(rc, r.is_send ? "MPI_Isend/wait" : "MPI_Irecv/wait", &r);
    r.active = false;
  }
}

// Unwatched (a library user, the MPI unit tests): poll MPI_Testall under a self-timed Deadline
// that reads the clock every Deadline::kClockEvery polls and throws TimeoutError naming the peer.
void MpiTransport::wait_all_polled(std::span<Request> rs) {
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
  Deadline deadline(scope(), Deadline::kClockEvery, this);
  for (const Request& r : rs)
    if (r.active) {
      deadline.message(r.peer, r.tag, r.bytes, r.is_send);
      break;
    }
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
      throw TimeoutError(timeout_message(deadline.timeout(), rs[i].peer, rs[i].is_send, ""), error_context(&rs[i]));
    }
    // All completed just as the deadline passed: the next poll's MPI_Testall returns them.
  }
  for (auto& r : rs) r.active = false;
}

void MpiTransport::barrier() {
  if (scope().watched()) {  // the watchdog bounds it: the plain blocking barrier
    BlockingCall call(scope(), this, kBarrierWhat);
    const int rc = MPI_Barrier(comm_);
    if (rc != MPI_SUCCESS) fail(rc, "MPI_Barrier", nullptr);
    return;
  }
  // Unwatched: a non-blocking barrier polled under a self-timed Deadline.
  MPI_Request mr;
  int rc = MPI_Ibarrier(comm_, &mr);
  if (rc != MPI_SUCCESS) fail(rc, "MPI_Ibarrier", nullptr);
  Deadline deadline(scope(), Deadline::kClockEvery, this, kBarrierWhat);
  const bool arrived = deadline.poll([&] {
    int flag = 0;
    const int trc = MPI_Test(&mr, &flag, MPI_STATUS_IGNORE);
    if (trc != MPI_SUCCESS) fail(trc, "MPI_Ibarrier/test", nullptr);
    return flag != 0;
  });
  if (!arrived) throw TimeoutError(timeout_message(deadline.timeout(), -1, false, kBarrierWhat), error_context());
}

}  // namespace collbench
