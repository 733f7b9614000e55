#pragma once
// The harness's own control plane: agreeing on decisions, reducing timing samples, gathering
// facts, over the World its backend's bootstrap made (collectives/backends/world.hpp) — MPI
// collectives under MPI, shared memory for the thread backend. Separate from the measured
// Transport, so harness traffic can never match an algorithm's messages, whatever the backend.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collectives/backends/world.hpp"
#include "collectives/transport/call_scope.hpp"
#include "harness/runtime/clock_sync.hpp"

namespace collbench {

// The harness's point-to-point tags on the control plane (clock_sync.cpp, p2p_point.cpp).
inline constexpr int kClockSyncTag = 7101;
inline constexpr int kPairDoneTag = 7102;

class Control {
 public:
  // With a `scope`, every call below (and the clock sync's) is published on it, so the rank's
  // watchdog bounds the control plane too (control_call.hpp). `world` outlives this.
  explicit Control(World& world, std::shared_ptr<CallScope> scope = nullptr);
  Control(const Control&) = delete;
  Control& operator=(const Control&) = delete;

  int rank() const { return world_.rank(); }
  int size() const { return world_.size(); }
  World& world() const { return world_; }
  // Where calls made on world() directly publish themselves (ControlCall); may be null.
  CallScope* scope() const { return scope_.get(); }

  void barrier();
  void max_in_place(std::span<double> values);  // element-wise max over ranks, result everywhere
  void sum_in_place(std::span<double> values);  // element-wise sum over ranks, result everywhere
  double broadcast(double v);                   // rank 0's value
  std::uint64_t sum(std::uint64_t v);
  bool any(bool v);
  int broadcast(int v);  // rank 0's value
  std::string broadcast(const std::string& s);
  std::vector<std::string> all_gather(const std::string& s);
  // Every rank's `mine` (the same length on every rank), rank after rank, to every rank.
  std::vector<double> all_gather(std::span<const double> mine);

  // Every rank passes its own error (or none); all get the lowest failing rank's message, so
  // all ranks fail together (or none does).
  std::optional<std::string> agree_error(const std::optional<std::string>& mine);

  // Ranks other than `src` wait for src's notice (sleeping between polls); src sends one to
  // each of them except `dst`. Used while a pair measures alone (p2p_point.cpp).
  void notify_all_but(int dst, int tag);
  void await_notice(int src, int tag, std::chrono::microseconds pause);

  // Every rank's clock offset to rank 0 (synchronized-start timing), over this control plane.
  ClockSync& clock() { return *clock_; }

 private:
  World& world_;
  std::shared_ptr<CallScope> scope_;
  std::optional<ClockSync> clock_;
};

}  // namespace collbench
