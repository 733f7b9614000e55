#include "collectives/backends/nccl/grouped_transport.hpp"

namespace collbench {

Request GroupedTransport::record(const Op& op) {
  Request r{next_id_++, op.peer, op.tag, op.bytes, op.is_send, op.bytes != 0};
  if (op.bytes) pending_.push_back(op);
  return r;
}

Request GroupedTransport::isend(const void* buf, std::size_t bytes, int peer, int tag) {
  check_peer(peer, "isend");
  check_tag(tag);
  // NCCL reads the send buffer when the group runs, which is fine: the caller must not
  // modify it before the request completes anyway.
  return record({const_cast<void*>(buf), bytes, peer, tag, true});
}

Request GroupedTransport::irecv(void* buf, std::size_t bytes, int peer, int tag) {
  check_peer(peer, "irecv");
  check_tag(tag);
  return record({buf, bytes, peer, tag, false});
}

void GroupedTransport::flush(const Request* focus) {
  if (pending_.empty()) {
    launched_below_ = next_id_;
    return;
  }
  const std::uint64_t upto = next_id_;
  try {
    run_group(pending_, focus);
  } catch (...) {
    pending_.clear();  // never relaunch a failed group
    launched_below_ = upto;
    throw;
  }
  pending_.clear();
  launched_below_ = upto;
}

void GroupedTransport::wait(Request& r) {
  if (!r.active) return;
  if (r.handle >= launched_below_) flush(&r);
  r.active = false;
}

void GroupedTransport::wait_all(std::span<Request> rs) {
  const Request* focus = nullptr;
  for (const Request& r : rs)
    if (r.active && r.handle >= launched_below_) {
      focus = &r;
      break;
    }
  if (focus) flush(focus);
  for (Request& r : rs) r.active = false;
}

ErrorContext GroupedTransport::op_context(const Op& op) const {
  const Request r{0, op.peer, op.tag, op.bytes, op.is_send, true};
  return error_context(&r);
}

}  // namespace collbench
