#pragma once
// Message tags name the *role* of a message inside one collective call, not the algorithm:
// every algorithm picks from these, so adding one needs no new tag and touches no other file.
//
// Why roles are enough: a tag only has to keep apart messages that could otherwise match the
// wrong receive, i.e. messages between the same two ranks in the same direction that are in
// flight at the same time. Within a call, distinct phases that overlap use distinct roles
// (the ring allreduce streams its reduce-scatter and allgather segments as one pipeline).
// Across calls, a rank may start the next call (of any algorithm) while its peer is still
// finishing this one; that is safe with the same tag because messages between two ranks with
// one tag match in the order they were sent (MPI's non-overtaking rule; the thread transport
// matches in order; NCCL ignores tags and matches by order anyway) and every call posts as
// many receives per (peer, role) as its peer sends. Repeated calls of one algorithm always
// relied on exactly this; roles only extend it to calls of different algorithms.
//
// The values are an unscoped enum in a namespace: typed where a schedule takes a role
// (`tag::Role`), and passed as the plain int Transport::isend/irecv take without a cast.
namespace collbench::tag {

enum Role : int {
  data = 1,        // the one kind of message of a single-phase algorithm
  fold,            // a rank outside the power-of-two core hands its input in
  unfold,          // ... and gets the result back
  exchange,        // a pairwise swap step (butterfly, recursive doubling)
  halving,         // recursive-halving reduce-scatter step
  doubling,        // recursive-doubling allgather step
  reduce_scatter,  // ring reduce-scatter segments
  allgather,       // ring allgather segments
};

}  // namespace collbench::tag
