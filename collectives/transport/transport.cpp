#include "collectives/transport/transport.hpp"

#include <array>

namespace collbench {

void Transport::wait_all(std::span<Request> rs) {
  for (Request& r : rs) wait(r);
}

void Transport::send(const void* buf, std::size_t bytes, int peer, int tag) {
  Request r = isend(buf, bytes, peer, tag);
  wait(r);
}

void Transport::recv(void* buf, std::size_t bytes, int peer, int tag) {
  Request r = irecv(buf, bytes, peer, tag);
  wait(r);
}

void Transport::sendrecv(const void* sbuf, std::size_t sbytes, int to, void* rbuf, std::size_t rbytes, int from,
                         int tag) {
  std::array<Request, 2> rs{irecv(rbuf, rbytes, from, tag), isend(sbuf, sbytes, to, tag)};
  wait_all(rs);
}

ErrorContext Transport::error_context(const Request* r) const {
  ErrorContext c;
  c.op = context_.op;
  c.algo = context_.algo;
  c.point_bytes = context_.point_bytes;
  c.iteration = context_.iteration;
  c.phase = context_.phase;
  c.rank = rank();
  if (r) {
    c.peer = r->peer;
    c.tag = r->tag;
    c.bytes = r->bytes;
  }
  return c;
}

void Transport::check_peer(int peer, const char* what) const {
  if (peer < 0 || peer >= size() || peer == rank()) {
    ErrorContext c = error_context();
    c.peer = peer;
    throw Error(std::string(what) + ": invalid peer (world size " + std::to_string(size()) + ")", c);
  }
}

void Transport::check_tag(int tag) const {
  if (tag < 0 || tag > kMaxTag) {
    ErrorContext c = error_context();
    c.tag = tag;
    throw Error("tag out of range [0, 32767]", c);
  }
}

}  // namespace collbench
