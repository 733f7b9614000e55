#pragma once
// NCCL's matching rules on the CPU: GroupedTransport (the launch model NcclTransport uses)
// over a host transport, with every message on one tag so that messages between two ranks
// match in posting order, as ncclSend/ncclRecv do. Each payload travels behind a header
// {bytes, tag}, and the receiver rejects a message whose size or tag differs from what it
// posted: on NCCL that message would have landed in the wrong buffer (or hung).
#include <memory>
#include <vector>

#include "collectives/backends/nccl/grouped_transport.hpp"

namespace collbench::testing {

class NcclModelTransport final : public GroupedTransport {
 public:
  // Shares the inner's call scope, as a wrapper does.
  explicit NcclModelTransport(Transport& inner) : GroupedTransport(inner.shared_scope()), inner_(inner) {}
  // A sub-transport hands out its root's memory space (the split contract), as NcclTransport's do.
  NcclModelTransport(Transport& inner, MemorySpace& root_memory) : NcclModelTransport(inner) {
    handed_out_ = &root_memory;
  }
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string_view backend() const override { return "nccl-model"; }
  // As NcclTransport's: synchronize/upload/download drain first (counted: drains()).
  MemorySpace& memory() override { return *handed_out_; }
  void barrier() override {
    flush();
    inner_.barrier();
  }
  std::string_view split_name() const override { return inner_.split_name(); }
  int world_rank(int rank) const override { return inner_.world_rank(rank); }
  int groups_launched() const { return groups_; }
  int drains() const { return drains_; }

 protected:
  // The model over a sub-transport of the inner, like ncclCommSplit over its parent.
  std::unique_ptr<Transport> make_split(std::string_view name, int color, int key) override {
    Transport* sub = inner_.split(name, color, key);
    return sub ? std::make_unique<NcclModelTransport>(*sub, *handed_out_) : nullptr;
  }
  void await_idle() override { ++drains_; }  // groups complete at launch here
  void run_group(std::span<const Op> ops, const Request*) override {
    headers_.resize(ops.size());
    reqs_.clear();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.is_send) {
        headers_[i] = {op.bytes, op.tag};
        reqs_.push_back(inner_.isend(&headers_[i], sizeof(Header), op.peer, kLane));
        reqs_.push_back(inner_.isend(op.buf, op.bytes, op.peer, kLane));
      } else {
        reqs_.push_back(inner_.irecv(&headers_[i], sizeof(Header), op.peer, kLane));
        reqs_.push_back(inner_.irecv(op.buf, op.bytes, op.peer, kLane));
      }
    }
    inner_.wait_all(reqs_);
    ++groups_;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.is_send || (headers_[i].bytes == op.bytes && headers_[i].tag == op.tag)) continue;
      throw TransportError("NCCL model: the next message from peer " + std::to_string(op.peer) + " has " +
                               std::to_string(headers_[i].bytes) + " bytes and tag " + std::to_string(headers_[i].tag) +
                               ", but this rank posted " + std::to_string(op.bytes) + " bytes with tag " +
                               std::to_string(op.tag) + " (NCCL matches by order and size, not by tag)",
                           op_context(op));
    }
  }

 private:
  struct Header {
    std::size_t bytes;
    int tag;
  };
  static constexpr int kLane = 0;
  Transport& inner_;
  DrainingMemory draining_{*this, inner_.memory()};
  MemorySpace* handed_out_ = &draining_;
  std::vector<Header> headers_;
  std::vector<Request> reqs_;
  int groups_ = 0;
  int drains_ = 0;
};

}  // namespace collbench::testing
