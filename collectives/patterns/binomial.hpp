#pragma once
// Binomial tree over any n >= 1, rooted anywhere. Work in *virtual* ranks v = (rank - root)
// mod n, so the root is v = 0 (MPICH's layout):
//   parent(v)   = v with its lowest set bit cleared
//   children(v) = v + 1, v + 2, v + 4, ... while the step is below v's lowest set bit
//                 (every power of two below n for the root) and the child is < n
//   subtree(v)  = the contiguous virtual ranks [v, v + min(lowbit(v), n - v)), n for the root
// A broadcast/scatter sends to the children from the last (farthest) to the first, so the
// subtrees with the most rounds left start first and everything arrives in ceil(log2 n)
// rounds; a reduce/gather takes them first to last (small subtrees finish first).
// Subtrees are contiguous in virtual ranks, so gather/scatter move each one as one block;
// in real ranks a subtree may wrap past n-1 (root != 0): see subtree_ranks(). Pure.
#include <algorithm>
#include <array>
#include <bit>

#include "collectives/patterns/ring.hpp"

namespace collbench::patterns::binomial {

constexpr int vrank(int rank, int root, int n) { return mod(rank - root, n); }
constexpr int rank_of(int v, int root, int n) { return mod(v + root, n); }

constexpr int lowbit(int v) { return v & -v; }
constexpr int ceil_log2(int n) { return n <= 1 ? 0 : std::bit_width(static_cast<unsigned>(n - 1)); }

// Virtual parent, or -1 for the root.
constexpr int parent(int v) { return v == 0 ? -1 : v & (v - 1); }

// Number of virtual ranks in v's subtree (v included).
constexpr int subtree_size(int v, int n) { return v == 0 ? n : std::min(lowbit(v), n - v); }

// The most children any rank has: ceil(log2 n) <= 31 for an int world size. Fixed-size
// arrays of this length (children, their requests) keep tree algorithms allocation-free.
inline constexpr int kMaxChildren = 32;

// Children in ascending order (v+1, v+2, v+4, ...): subtree of the i-th child is
// [v + 2^i, v + 2^(i+1)) clipped to n, so together they tile [v + 1, v + subtree_size(v)).
struct Children {
  std::array<int, kMaxChildren> vranks{};
  int count = 0;
  constexpr const int* begin() const { return vranks.data(); }
  constexpr const int* end() const { return vranks.data() + count; }
};

constexpr Children children(int v, int n) {
  Children c;
  const long long limit = v == 0 ? n : lowbit(v);  // steps below v's lowest set bit
  for (long long step = 1; step < limit && v + step < n; step <<= 1) c.vranks[c.count++] = static_cast<int>(v + step);
  return c;
}

// Broadcast round (1-based) in which v receives when every node sends to its children last
// to first, one per round; the root has "received" in round 0. The maximum is ceil(log2 n).
constexpr int receive_round(int v, int n) { return v == 0 ? 0 : ceil_log2(n) - std::countr_zero(static_cast<unsigned>(v)); }

// v's subtree in real ranks: [first, first + head), then [0, tail) when it wraps past n-1.
// Block i of the subtree (virtual rank v + i) belongs to real rank rank_of(v + i, root, n).
struct RankSpan {
  int first = 0;
  int head = 0;
  int tail = 0;
  constexpr bool wraps() const { return tail > 0; }
};

constexpr RankSpan subtree_ranks(int v, int root, int n) {
  const int first = rank_of(v, root, n), size = subtree_size(v, n);
  const int head = std::min(size, n - first);
  return {first, head, size - head};
}

}  // namespace collbench::patterns::binomial
