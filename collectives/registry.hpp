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
class PeerMemory;
// Zero-copy algorithms: whether a call's readers claim the peer lines they alone read
// (schedules/peer.hpp), and the traffic between two flags the rule weighed (a staged call's
// round); and whether a staged call reads the peers' user buffers by the kernel's single copy
// instead (schedules::peer::kernel_copies); and the segment its calls reduce, copy or pipeline
// in, chosen at run time from the machine's caches (or --segment), 0 where they work in one
// piece; and whether the calls' final copies into recv go by streaming stores, where the run
// measured them faster for the call's output (schedules::peer::streams). The algorithm decides
// by it, and the harness records it (`peer_claim`).
struct ClaimChoice {
  bool claims = false;
  double traffic_bytes = 0;
  bool kernel_copy = false;
  std::size_t segment_bytes = 0;
  bool streams = false;
};
using ClaimFn = ClaimChoice (*)(const PeerMemory&, int world_size, const CollArgs&, bool registered);
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

// What the analysis needs to know of an algorithm beyond its name (docs/records.md "Algorithm
// traits"): written by `--list --json` and into every run record, so nothing downstream guesses
// from names. Set where the algorithm registers (COLLBENCH_REGISTER's second argument); an entry
// registered without them gets Registry::default_traits.
struct AlgoTraits {
  // Its schedule follows the node layout: phases inside each node and across nodes (the hier
  // algorithms). Node-blind algorithms are "flat".
  bool node_aware = false;
  // Moves data through the node's peer memory (zero-copy loads and stores into shared windows),
  // not messages: every rank must be on one node (the shm algorithms).
  bool peer_memory = false;
  // The tie-break when algorithms are equally fast (colltune, the report's answers): the lowest
  // rank is the simplest and wins. The scale in use: 0 the library's own choice, 10 its other
  // entries, 20-80 flat schedules by how much they do (naive 20, ring 30, tree 40, butterfly 50,
  // recursive_doubling 60, pairwise 70, rabenseifner 80), 90 peer memory (shm), 100-120
  // node-aware (hier 100, hier_leader 110, hier_ring 120); kUnranked after all of them, equal
  // ranks by name.
  int simplicity_rank = kUnranked;
  static constexpr int kUnranked = 1000;
  // Peer memory algorithms that claim what they read (ClaimFn); behaviour, not written by
  // --list --json.
  ClaimFn claims = nullptr;
};

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
  AlgoTraits traits{};          // filled by Registry::add (explicit, or default_traits)
  // The backend's own code (library, library:ALGO, han), not one of collbench's algorithms.
  bool library() const { return backend != "any"; }
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
  // Registers `e` with `traits`, or without them with default_traits(e).
  static void add(AlgoEntry e);
  static void add(AlgoEntry e, AlgoTraits traits);
  // The traits of an entry registered without any: neutral for collbench's algorithms; for the
  // library entries, whose files do not state them, derived from the name (registry.cpp).
  static AlgoTraits default_traits(const AlgoEntry& e);

  // The entry for (op, algo) usable on `backend` ("library" resolves to that backend's one).
  const AlgoEntry* find(Op op, std::string_view algo, std::string_view backend) const;
  // Every algo name for an op usable on a backend: custom ones sorted, then "library", then
  // the library's variants ("library:...") sorted.
  std::vector<const AlgoEntry*> for_op(Op op, std::string_view backend) const;
  const std::vector<AlgoEntry>& all() const { return entries_; }

  // An algo name another build of collbench has (Open MPI's han in an MPICH build), and why this
  // one has not: --algo NAME says so in one line instead of "unknown algo".
  static void add_elsewhere(std::string algo, std::string backend, std::string reason);
  std::optional<std::string> elsewhere(std::string_view algo, std::string_view backend) const;

 private:
  static Registry& mutable_instance();
  struct Elsewhere {
    std::string algo, backend, reason;
  };
  std::vector<AlgoEntry> entries_;
  std::vector<Elsewhere> elsewhere_;
};

struct Registrar {
  explicit Registrar(AlgoEntry e) { Registry::add(std::move(e)); }
  Registrar(AlgoEntry e, AlgoTraits traits) { Registry::add(std::move(e), traits); }
};

#define CB_CONCAT_INNER(a, b) a##b
#define CB_CONCAT(a, b) CB_CONCAT_INNER(a, b)
// COLLBENCH_REGISTER({Op::allreduce, "ring", "any", "description", "requirements", &run},
//                    {.simplicity_rank = 30});   // the traits (AlgoTraits), designated
#define COLLBENCH_REGISTER(...) \
  static const ::collbench::Registrar CB_CONCAT(collbench_registrar_, __COUNTER__)(::collbench::AlgoEntry __VA_ARGS__)

}  // namespace collbench
