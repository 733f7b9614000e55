#pragma once
// Recursive doubling / halving over any world size, MPICH style. Pure; no communication.
//
// Exchanges pair ranks at distances 1, 2, 4 ..., which needs a power of two. With
// pof2 = largest power of two <= n and rem = n - pof2, the first 2*rem ranks pair up
// (2i, 2i+1): the even rank folds its data into the odd one and sits out; the survivors
// are renumbered newrank 0..pof2-1 and exchange; at the end the odd ranks send the result
// back to their folded partners.
//
//   n = 6: pof2 = 4, rem = 2     rank     0  1  2  3  4  5
//                                newrank  -  0  -  1  2  3
namespace collbench::patterns {

constexpr int pof2_floor(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

constexpr int log2_exact(int pof2) {
  int s = 0;
  while ((1 << s) < pof2) ++s;
  return s;
}

struct Fold {
  int n, pof2, rem;

  constexpr explicit Fold(int world) : n(world), pof2(pof2_floor(world)), rem(world - pof2_floor(world)) {}

  constexpr int steps() const { return log2_exact(pof2); }
  // Even ranks below 2*rem give their data to rank + 1 and take no part in the exchange.
  constexpr bool folded(int rank) const { return rank < 2 * rem && rank % 2 == 0; }
  // Odd ranks below 2*rem receive a folded rank's data first and send it the result last.
  constexpr bool absorbs(int rank) const { return rank < 2 * rem && rank % 2 == 1; }
  // The other rank of a folding pair, or -1 for ranks >= 2*rem.
  constexpr int fold_partner(int rank) const { return rank < 2 * rem ? (rank ^ 1) : -1; }
  // Position among the pof2 exchanging ranks, or -1 for a folded rank.
  constexpr int newrank(int rank) const { return folded(rank) ? -1 : rank < 2 * rem ? rank / 2 : rank - rem; }
  constexpr int rank_of(int newrank) const { return newrank < rem ? 2 * newrank + 1 : newrank + rem; }
  // The real rank paired with an active `rank` across bit `mask` of newrank.
  constexpr int partner(int rank, int mask) const { return rank_of(newrank(rank) ^ mask); }
  // After the fold, newrank j carries the data of real ranks [first_carried(j), first_carried(j+1)):
  // contiguous and increasing, so newrank groups map to contiguous rank ranges (allgather).
  constexpr int first_carried(int newrank) const { return newrank < rem ? 2 * newrank : newrank + rem; }
};

// A range of blocks [first, last) of data split into pof2 blocks (see chunks.hpp).
struct BlockRange {
  int first = 0, last = 0;
  constexpr int size() const { return last - first; }
  friend constexpr bool operator==(const BlockRange&, const BlockRange&) = default;
};

// Recursive halving (the reduce-scatter of Rabenseifner's allreduce). Step s pairs newranks
// across mask 1 << s: the nearest partner first, with the largest message, so on a
// block-placed cluster the big exchanges stay inside a node. Each step halves the range a
// rank holds; the rank whose bit s is 0 keeps the lower half. The range held after `steps_done`
// steps (the whole data before any):
constexpr BlockRange halving_held(int newrank, int steps_done, int pof2) {
  int first = 0, size = pof2;
  for (int t = 0; t < steps_done; ++t) {
    size /= 2;
    if ((newrank >> t) & 1) first += size;
  }
  return {first, first + size};
}
constexpr int halving_mask(int step) { return 1 << step; }
// Step s: reduce the received half into the kept one; send the other half (what the partner keeps).
constexpr BlockRange halving_keep(int newrank, int step, int pof2) { return halving_held(newrank, step + 1, pof2); }
constexpr BlockRange halving_send(int newrank, int step, int pof2) {
  return halving_held(newrank ^ halving_mask(step), step + 1, pof2);
}
// The one block a rank owns fully reduced at the end: newrank with its bits reversed
// (the price of nearest-first halving with contiguous halves).
constexpr int halving_owned_block(int newrank, int pof2) { return halving_held(newrank, log2_exact(pof2), pof2).first; }

// Recursive doubling allgather that undoes the halving: step s reverses halving step
// steps-1-s (partner across mask pof2 >> (s+1), far first, smallest message first).
constexpr int undo_halving_step(int step, int pof2) { return log2_exact(pof2) - 1 - step; }
constexpr int unhalving_mask(int step, int pof2) { return halving_mask(undo_halving_step(step, pof2)); }
constexpr BlockRange unhalving_send(int newrank, int step, int pof2) {
  return halving_keep(newrank, undo_halving_step(step, pof2), pof2);
}
constexpr BlockRange unhalving_recv(int newrank, int step, int pof2) {
  return halving_send(newrank, undo_halving_step(step, pof2), pof2);
}

// Recursive doubling allgather in natural order (allgather/recursive_doubling): before step s
// a newrank holds the data of its aligned group of 1 << s newranks; it swaps that group with
// the partner across mask 1 << s, doubling it. Ranges are in newranks (see first_carried()).
constexpr int doubling_mask(int step) { return 1 << step; }
constexpr BlockRange doubling_group(int newrank, int step) {
  const int size = 1 << step, first = newrank / size * size;
  return {first, first + size};
}

}  // namespace collbench::patterns
