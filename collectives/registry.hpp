#pragma once
// (op, algo, backend) -> how to run it. Each algorithm file registers itself with
// COLLBENCH_REGISTER, so adding an algorithm touches no other file. The table is filled
// during static initialisation and only read afterwards.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectives/collective.hpp"
#include "collectives/transport/transport.hpp"

namespace collbench {

using CollFn = void (*)(Transport&, const CollArgs&);
// Returns a reason when the algorithm cannot run this case (world size, count...), checked
// before any communication so every rank skips consistently.
using SupportFn = std::optional<std::string> (*)(int world_size, const CollArgs&);
// The memory traffic (bytes loaded + stored) one rank's call needs at least, for algorithms
// bound by memory rather than links (the zero-copy ones); `registered`: the buffers are in
// peer memory. The harness turns it into a result's `efficiency`.
using TrafficFn = double (*)(int world_size, const CollArgs&, bool registered);
// What a library entry runs with: (setting, value) pairs, e.g. the Open MPI MCA variables or
// the NCCL environment in force for it ("coll_tuned_allreduce_algorithm" = "ring"). Results
// record it as `library_config`.
using LibraryConfig = std::vector<std::pair<std::string, std::string>>;
struct AlgoEntry;
using ConfigFn = LibraryConfig (*)(const AlgoEntry&, const CollArgs&);
// A library call bound to one case's buffers and arguments (datatype, op, count, communicator
// resolved once, as a program calling the library would): calling it makes exactly the call
// `run` makes, published for the watchdog, and nothing else. The harness times it in place of
// run_entry where run_entry would call `run` as it is (no avg wrapping); the bound objects must
// outlive it.
using PreparedCall = std::function<void()>;
using PrepareFn = PreparedCall (*)(Transport&, const CollArgs&);

struct AlgoEntry {
  Op op;
  std::string algo;          // "ring", "tree", ... or "library" for the backend's own
  std::string backend;       // "any" for algorithms over Transport; "mpi"/"nccl" for library entries
  std::string description;   // one line for --list
  std::string requirements;  // one line for --list, e.g. "any world size, any count"
  CollFn run = nullptr;
  SupportFn supports = nullptr;  // null: supports every case
  TrafficFn traffic = nullptr;   // null: no memory-traffic model (no efficiency reported)
  bool native_avg = false;       // applies RedOp::avg itself (NCCL's ncclAvg); else run_entry does
  ConfigFn config = nullptr;     // library entries: the settings in force (null for custom algorithms)
  // A library-internal variant ("library:ring"): measured when named or through "library:all",
  // not by "all", so sweeps of every algorithm keep their size.
  bool on_request = false;
  PrepareFn prepare = nullptr;  // library entries: the timed call, bound once per case (null: run)
};

// Runs `e` on `a`: what every caller does instead of e.run, so RedOp::avg works with every
// algorithm the way NCCL defines ncclAvg. Unless the entry is native_avg: floating inputs are
// pre-multiplied by 1/n into a scratch copy (one input's size) and summed from it; integers are summed, then divided by n (truncating, as C). The
// scaling runs in the transport's memory space (its reduce kernel), so device buffers work.
void run_entry(const AlgoEntry& e, Transport& t, const CollArgs& a);
// True when run_entry(e, t, a) is e.run(t, a) as it is: the entry's prepared call may stand in.
inline bool runs_as_is(const AlgoEntry& e, const CollArgs& a) {
  return a.op.kind != RedOp::avg || e.native_avg || !op_reduces(e.op);
}

class Registry {
 public:
  static const Registry& get();
  static void add(AlgoEntry e);

  // The entry for (op, algo) usable on `backend` ("library" resolves to that backend's one).
  const AlgoEntry* find(Op op, std::string_view algo, std::string_view backend) const;
  // Every algo name for an op usable on a backend: custom ones sorted, then "library", then
  // the library's variants ("library:...") sorted.
  std::vector<const AlgoEntry*> for_op(Op op, std::string_view backend) const;
  const std::vector<AlgoEntry>& all() const { return entries_; }

 private:
  static Registry& mutable_instance();
  std::vector<AlgoEntry> entries_;
};

struct Registrar {
  explicit Registrar(AlgoEntry e) { Registry::add(std::move(e)); }
};

#define CB_CONCAT_INNER(a, b) a##b
#define CB_CONCAT(a, b) CB_CONCAT_INNER(a, b)
// COLLBENCH_REGISTER({Op::allreduce, "ring", "any", "description", "requirements", &run});
#define COLLBENCH_REGISTER(...) \
  static const ::collbench::Registrar CB_CONCAT(collbench_registrar_, __LINE__)(::collbench::AlgoEntry __VA_ARGS__)

}  // namespace collbench
