#pragma once
// One measured (or skipped) point, as a struct; report_json.cpp serialises it once and
// report_table.cpp prints it. Field meanings: results/README.md.
#include <cstdint>
#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectives/transport/peer_memory.hpp"
#include "harness/plan/run_config.hpp"
#include "harness/results/stats.hpp"

namespace collbench {

struct PointResult {
  std::string op, algo, backend, device, dtype;
  std::optional<std::string> redop;  // reducing ops only
  std::optional<int> root;           // rooted ops only
  bool in_place = false;
  bool registered_buffers = false;  // JSON "buffers": "registered" (absent when plain)
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;  // bytes / dtype size
  int world_size = 1, nodes = 1, ranks_per_node = 1;
  long iters = 0;  // timed operations
  int warmup = 0;
  TimingMode mode = TimingMode::per_iter;
  std::optional<Stats> time_us;  // absent when skipped
  std::vector<double> samples_us;            // the samples time_us summarises, in measurement order (collectives)
  SyncMethod sync = SyncMethod::barrier;     // how the samples were started (JSON "sync")
  std::optional<std::string> sync_fallback;  // clock start asked for, barrier used: why
  bool sync_planned = false;  // that barrier start was the plan for a long op, not a failed clock (no table marker)
  long late = 0;                             // clock: samples excluded because a rank started late
  std::optional<double> start_skew_us;       // median over samples of latest − earliest rank start
  std::optional<double> window_us;           // clock: the start window used
  std::optional<double> osu_avg_us, nccl_avg_us;  // the reference tools' conventions
  std::optional<double> efficiency;               // necessary data movement's time on the links crossed / p50
  // Zero-copy (peer memory) algorithms on host memory: whether the calls claimed the lines they
  // read, and what decided it at run time (schedules/peer.hpp; JSON "peer_claim").
  struct PeerClaim {
    std::uint64_t l1_bytes = 0, l2_bytes = 0, llc_bytes = 0, stage_bytes = 0;
    std::uint64_t segment_bytes = 0;  // ClaimChoice::segment_bytes: chosen from the caches or --segment
    double max_traffic_bytes = 0, traffic_bytes = 0;
    bool claims = false;
    PeerMemory::ClaimProbe probe;  // the machine's measured answer to "does a claim pay here"
    bool kernel_copy = false;      // staged calls read the peers' user buffers by the kernel instead
    PeerMemory::KernelCopyProbe kernel_probe;  // and from what size that is faster here, measured
    bool streams = false;                      // the calls' final copies into recv by streaming stores
    PeerMemory::StreamProbe stream_probe;      // and from what output size that is faster here, measured
  };
  std::optional<PeerClaim> peer_claim;
  // --cache cold: the pool of send/recv sets the point's calls rotated through (JSON "cache"
  // and "cache_pool"; hot points have none).
  struct CachePool {
    std::uint64_t bytes = 0, sets = 0, set_bytes = 0, llc_bytes = 0;
    std::string llc_source;
    std::uint64_t verified_sets = 0;  // sets verification checked (0: -c 0 or skipped)
  };
  bool cache_cold = false;
  std::optional<CachePool> cache_pool;
  // --per-rank: each rank's own time and start skew per kept sample, rank x sample (JSON
  // "per_rank"); start_ref says what the skew is relative to ("agreed" start or "earliest" rank).
  struct PerRank {
    std::vector<std::vector<double>> time_us, start_skew_us;
    std::string start_ref;
  };
  std::optional<PerRank> per_rank;
  std::optional<double> algbw_GBps, busbw_GBps;
  std::uint64_t wrong = 0;  // wrong elements over all ranks
  bool checked = false;     // verification ran (-c 1 and not skipped)
  bool skipped = false;
  std::optional<std::string> skip_reason;
  bool resumed = false;  // --resume: recorded by an earlier run, not measured (never written again)
  // --algo auto only: the algorithm run, the tuning file's range ("FILE:LINE", or "none") and
  // how the entry matched the layout ("exact", "nearest 2x2", or why none applied).
  std::optional<std::string> chosen, tuning, tuning_match;
  // Library entries only: the settings the library ran this entry with (MCA/MPI_T variables,
  // NCCL environment), in order; absent (JSON null) for custom algorithms.
  std::optional<std::vector<std::pair<std::string, std::string>>> library_config;
  // Point-to-point (pingpong) records only: the pair and whether it stays within a node.
  std::optional<int> src, dst;
  std::optional<std::string> link;  // "intra" | "inter"
  // --workload ddp records only (JSON "type": "workload"): what was synchronised, and each
  // bucket's all-reduce time.
  struct DdpBucket {
    std::size_t tensors = 0;
    std::uint64_t count = 0, bytes = 0;
    std::string dtype, first, last;  // first/last: parameter names, in the bucket's order
    std::vector<std::size_t> params;  // indices into the model's parameter list, in the bucket's order (DDP's
                                      // rebuilt_per_bucket_param_indices)
    std::optional<std::string> chosen, tuning;  // --algo auto: this bucket's algorithm and its FILE:LINE
  };
  struct Ddp {
    std::string model, model_source, grad_order;
    std::int64_t param_count = 0;
    std::size_t param_tensors = 0;
    double bucket_cap_mb = 0, first_bucket_cap_mb = 0;
    std::vector<DdpBucket> buckets;
    std::vector<double> bucket_p50_us;  // per bucket: max over ranks, p50 over every timed step
    std::optional<std::array<double, 3>> compute_ms;  // forward, backward, optimizer
    std::string compute_source;                        // "--compute-ms" or "profile:PATH"
    std::vector<double> bucket_backward_ms;            // profile only: each bucket's backward time
  };
  std::optional<Ddp> ddp;
};

// What a reader needs to tell noise from differences (run record "calibration"), measured
// once per run before the first point.
struct Calibration {
  double timer_resolution_ns = 0;  // smallest non-zero step between consecutive steady_clock reads
  double timer_read_ns = 0;        // mean cost of one steady_clock::now()
  double barrier_us = 0;           // median of kBarrierReps empty barriers on the measured transport, max over ranks
  int barrier_reps = 0;
  double clock_sync_error_us = 0;  // largest half round trip of the kept ping-pongs, over ranks
  int clock_sync_rounds = 0;
  std::vector<double> clock_offset_us;  // each rank's estimated offset to rank 0
  std::vector<bool> clock_shared;       // each rank: reads rank 0's kernel clock (offset exactly 0, not estimated)
};

}  // namespace collbench
