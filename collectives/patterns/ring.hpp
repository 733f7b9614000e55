#pragma once
// Ring topology: rank r sends to r+1 and receives from r-1 (mod n). In the ring
// reduce-scatter / allgather, step s (0..n-2) of rank r sends chunk (r - s) and receives
// chunk (r - s - 1); after the reduce-scatter rank r owns the fully reduced chunk (r + 1).
namespace collbench::patterns {

constexpr int mod(int a, int n) { return ((a % n) + n) % n; }
constexpr int ring_next(int rank, int n) { return mod(rank + 1, n); }
constexpr int ring_prev(int rank, int n) { return mod(rank - 1, n); }

// Reduce-scatter (n-1 steps): chunk index sent / received at `step`.
constexpr int rs_send_chunk(int rank, int step, int n) { return mod(rank - step, n); }
constexpr int rs_recv_chunk(int rank, int step, int n) { return mod(rank - step - 1, n); }
// The chunk rank r holds fully reduced after the reduce-scatter.
constexpr int rs_owned_chunk(int rank, int n) { return mod(rank + 1, n); }
// Allgather starting from the owned chunk (n-1 steps): chunk sent / received at `step`.
constexpr int ag_send_chunk(int rank, int step, int n) { return mod(rank + 1 - step, n); }
constexpr int ag_recv_chunk(int rank, int step, int n) { return mod(rank - step, n); }

// Position of `rank` in a ring that starts at `root` (root is 0), and back.
constexpr int ring_position(int rank, int root, int n) { return mod(rank - root, n); }
constexpr int ring_rank_at(int position, int root, int n) { return mod(position + root, n); }

}  // namespace collbench::patterns
