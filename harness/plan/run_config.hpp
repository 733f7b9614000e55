#pragma once
// What one `collbench` invocation was asked to do, fully resolved from the command line and
// an optional YAML sweep file. Plain data: no parsing, no MPI; passed down explicitly.
#include <cstdint>
#include <array>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "collectives/collective.hpp"
#include "harness/plan/expect.hpp"
#include "harness/plan/pairs.hpp"

namespace collbench {

// How a point's iterations are timed (JSON "mode").
enum class TimingMode { per_iter, batch, interleaved };

// How the ranks start each per-iteration sample (JSON "sync"): at a start time agreed on
// rank 0's clock (offsets estimated per run), or after a barrier. back_to_back: pingpong,
// each iteration started by the previous one's reply (never a setting).
enum class SyncMethod { clock, barrier, back_to_back };

// Sweep parameters that a YAML case may override. Every field has a command-line flag and
// a YAML key of the same long name (see settings.cpp); defaults are the documented ones.
struct Settings {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 16ull << 20;
  std::uint64_t step_factor = 2;  // geometric steps (nccl-tests -f) ...
  std::uint64_t step_bytes = 0;   // ... unless > 0: linear steps (nccl-tests -i)
  int iters = 20;
  int warmup = 5;
  bool check = true;
  std::vector<DType> dtypes{DType::float32};
  std::vector<RedOp> redops{RedOp::sum};
  bool redops_given = false;  // --redop/redop: set; unset, a DDP workload averages (as DDP does)
  int root = 0;
  std::vector<bool> placements{false};  // in_place values to run: {false}, {true} or both
  bool batch = false;
  bool interleave = false;
  double timeout_s = 60;
  // Adaptive stopping: active when min_time_s > 0 or max_noise > 0; `iters` is then the
  // first round and max_iters the cap.
  double min_time_s = 0;
  double max_noise = 0;
  int max_iters = 1000;
  std::uint64_t segment_bytes = 0;  // CollArgs::segment_bytes; 0 = algorithm default
  PairSpec pairs;                   // pingpong: which rank pairs (--pairs)
  SyncMethod sync = SyncMethod::clock;  // per-iteration start: clock (default) or barrier
  bool registered_buffers = false;      // --buffers registered: send/recv in the node's peer memory
  // --cache cold: every call on another set of send/recv buffers from a pool larger than the
  // last-level cache (IMB's -off_cache), so no call finds its data in cache; hot (default)
  // reuses one set, as nccl-tests does. cache_pool_bytes: the pool per rank (0: 2x the LLC).
  bool cache_cold = false;
  std::uint64_t cache_pool_bytes = 0;
  // --per-rank: results keep every rank's own time and start skew per sample (stragglers).
  bool per_rank = false;
  // --workload ddp: a training step's gradient synchronisation instead of a size sweep: every
  // gradient bucket of `model` all-reduced back to back, buckets made as PyTorch DDP makes them.
  std::string workload;                 // "" (a collective or pingpong sweep) or "ddp"
  std::string model;                    // a builtin model name or a model file (.json/.yaml)
  double bucket_cap_mb = 25;            // DDP's bucket_cap_mb (MiB); the first bucket's cap is 1 MiB
  std::optional<DType> grad_dtype;      // gradients' dtype; unset: each parameter's own
  std::string grad_order;               // gradient-ready order file; "": reverse registration order
  std::optional<std::array<double, 3>> compute_ms;  // forward, backward, optimizer per step (ms)
  std::string compute_profile;          // or a per-layer profile file (workload/profile.hpp)

  bool adaptive() const { return min_time_s > 0 || max_noise > 0; }
  TimingMode mode() const {
    return batch ? TimingMode::batch : interleave ? TimingMode::interleaved : TimingMode::per_iter;
  }
};

// Point-to-point between rank pairs (--op pingpong): a kind of measurement of its own, not a
// collective Op; its "algos" are the methods latency, bw, bibw.
struct Pingpong {
  bool operator==(const Pingpong&) const = default;
};
// One entry of --op: a collective or pingpong. A case keeps them in the order given.
using OpChoice = std::variant<Op, Pingpong>;

// One entry of the sweep: ops × algos with their settings. Empty `algos`: the default (the
// backend's own collective, "library", where it has one, else all; pingpong: every method);
// "all" in the list: every algorithm.
struct CaseSpec {
  std::vector<OpChoice> ops;
  std::vector<std::string> algos;
  Settings settings;
  std::string origin;  // "command line" or "FILE:LINE:COL" (for error messages)
};

// The backend of a run without --backend (its registry entry words the messages).
inline constexpr const char* kDefaultBackend = "mpi";

struct RunConfig {
  std::vector<std::string> argv;
  std::string backend = kDefaultBackend;
  std::string device = "cpu";
  std::optional<std::string> json_path;
  std::optional<std::string> tuning_path;  // --tuning: the file --algo auto reads (tuning.hpp)
  std::optional<std::string> links_path;   // --links: link rates shared by the runs of a job (links_file.hpp)
  std::optional<Expectations> expect;      // --expect: the acceptance gate's references (expect.hpp), parsed
  bool overwrite = false;
  bool resume = false;  // --resume: skip points the --json file already holds (resume.hpp)
  bool quiet = false;
  // --keep-samples: a result carries its per-sample times (samples_us) when it has at most this
  // many samples; 0 never.
  long keep_samples = 1000;
  bool list = false;
  bool list_json = false;  // --list --json: the registry as JSON, with each entry's traits
  bool print_layouts = false;
  bool print_backend = false;  // --print-backend: the backend and its bootstraps, one line
  bool dry_run = false;              // --dry-run: parse, plan, check memory, print the plan; no MPI
  std::optional<int> spawn;  // --spawn N: ranks this process starts (bootstrap "spawn")
  std::string launcher;      // --launcher: the bootstrap, when not chosen from the environment
  std::optional<int> ranks;  // --ranks: the thread backend's ranks, the world size a dry run plans for; else the launcher's
  std::optional<std::string> config_path;
  std::string name;                  // sweep name from the YAML file
  std::vector<std::string> layouts;  // "NODESxRANKS_PER_NODE", for slurm/sweep.sh
  std::vector<CaseSpec> cases;
};

constexpr const char* sync_method_name(SyncMethod m) {
  return m == SyncMethod::clock ? "clock" : m == SyncMethod::barrier ? "barrier" : "back_to_back";
}

constexpr const char* timing_mode_name(TimingMode m) {
  return m == TimingMode::per_iter ? "per_iter" : m == TimingMode::batch ? "batch" : "interleaved";
}

}  // namespace collbench
