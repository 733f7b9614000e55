#pragma once
// What the preload keeps per application communicator (docs/preload.md "Communicators"): a
// Context, made at the first served call on it (collective over it, as that call is), hung on it
// as an MPI attribute and freed with it (the attribute's delete callback, or MPI_Finalize's
// wrapper for WORLD and SELF); and Contexts, which finds a communicator's, makes it and frees
// WORLD's and SELF's. Per communicator, so not global state: it hangs on the communicator.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "collectives/backends/mpi/mpi_transport.hpp"
#include "collectives/backends/mpi/preload/preload.hpp"
#include "collectives/core/workspace.hpp"
#include "collectives/registry.hpp"
#include "collectives/formats/tuning.hpp"

namespace collbench::preload {

// What the tuning file chose for one (op, size) on one communicator: an algorithm, or the
// library and why.
struct Choice {
  const AlgoEntry* entry = nullptr;
  std::string why;  // entry null: why the library
};

// Everything the preload keeps for one application communicator: its private communicator,
// transport, node layout and scratch, and the choices made on it.
class Context {
 public:
  Context(MPI_Comm app, const std::shared_ptr<CallScope>& scope);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  MpiTransport& transport() { return *transport_; }
  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  const TunedLayout& layout() const { return layout_; }
  Workspace& work() { return *work_; }
  // Scratch for staged buffers: slot 0 the send side, 1 the receive side.
  void* stage(std::size_t bytes, int slot) { return stage_->get(bytes, slot); }

  // The tuning file's choice for (op, bytes) on this communicator, remembered (a program uses
  // few sizes; the memo is dropped when it grows past kChoices).
  template <class Choose>
  const Choice& choice(Op op, std::uint64_t bytes, Choose&& choose) {
    Last& last = last_[op_index(op)];  // a loop of one size: no lookup
    if (last.choice && last.bytes == bytes) return *last.choice;
    auto& memo = choices_[op_index(op)];
    auto it = memo.find(bytes);
    if (it == memo.end()) {
      if (memo.size() >= kChoices) memo.clear();
      it = memo.emplace(bytes, choose()).first;
    }
    last = {bytes, &it->second};
    return it->second;
  }
  // Algorithms that refused this communicator (NotSupported at their start, on every rank).
  const std::string* refused(const AlgoEntry* e) const {
    auto it = refused_.find(e);
    return it == refused_.end() ? nullptr : &it->second;
  }
  void refuse(const AlgoEntry* e, std::string why) { refused_.emplace(e, std::move(why)); }

 private:
  static constexpr std::size_t kChoices = 1024;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::unique_ptr<MpiTransport> transport_;
  int rank_ = 0, size_ = 1;
  TunedLayout layout_;
  std::unique_ptr<Workspace> work_, stage_;
  std::unordered_map<std::uint64_t, Choice> choices_[kOps];
  struct Last {
    std::uint64_t bytes = 0;
    const Choice* choice = nullptr;
  };
  Last last_[kOps];  // the latest choice per op (unordered_map nodes stay put until cleared)
  std::map<const AlgoEntry*, std::string> refused_;
};

// The application communicators' contexts, each an attribute (`keyval`) of its communicator.
class Contexts {
 public:
  explicit Contexts(int keyval);
  // The context of `comm`, or null when none is made yet; false when `comm` is not a communicator.
  bool find(MPI_Comm comm, Context*& ctx);
  // Makes `comm`'s context and hangs it on `comm` (collective over it, as the call served is).
  Context* make(MPI_Comm comm);
  // A context is being freed (its communicator's delete callback): not the remembered one now.
  void forget(const Context* ctx) {
    if (ctx == last_ctx_) remember(MPI_COMM_NULL, nullptr);
  }
  // MPI_Finalize's wrapper, before PMPI_Finalize: WORLD's and SELF's contexts (a collective free
  // for WORLD: every rank is here), and the keyval.
  void end();

 private:
  void remember(MPI_Comm comm, Context* ctx) {
    last_comm_ = comm;
    last_ctx_ = ctx;
  }
  int keyval_;
  std::shared_ptr<CallScope> scope_;  // the contexts' transports'
  // The latest communicator with a context, and it: set when one is found or made, cleared when
  // it is freed, so a handle MPI reuses for a new communicator is never taken for the old one.
  MPI_Comm last_comm_ = MPI_COMM_NULL;
  Context* last_ctx_ = nullptr;
};

}  // namespace collbench::preload
