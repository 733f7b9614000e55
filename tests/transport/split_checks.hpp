#pragma once
// The split() contract, checked on one rank of any transport (collective: every rank of `t`
// calls it). Used by the thread tests (world sizes 1-8), the MPI tests (mpirun -np 1-8) and
// over wrappers. Uneven partitions: rank % 3; rank 0 alone vs the rest with keys reversing
// the order; odd ranks only (even ranks pass kNoColor); a split of a split.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "collectives/transport/transport.hpp"

namespace collbench::testing {

// Sends this rank's world rank around the ring of `sub` (tag 5) and checks what arrives.
inline void expect_ring_in(Transport& sub, const std::string& what) {
  const int m = sub.size(), me = sub.rank();
  if (m < 2) return;
  const int right = (me + 1) % m, left = (me + m - 1) % m;
  int out = sub.world_rank(me), in = -1;
  std::array<Request, 2> rs{sub.irecv(&in, sizeof in, left, 5), sub.isend(&out, sizeof out, right, 5)};
  sub.wait_all(rs);
  EXPECT_EQ(in, sub.world_rank(left)) << what << ": sub rank " << me << " got a message from outside its group";
}

// `t` is a root transport (its ranks are world ranks).
inline void check_split_contract(Transport& t) {
  const int n = t.size(), r = t.rank();
  const std::string where = "world " + std::to_string(n) + " rank " + std::to_string(r);

  // 1. color = rank % 3, key = rank: sub rank = rank / 3.
  Transport* mod3 = t.split("mod3", r % 3, r);
  ASSERT_NE(mod3, nullptr) << where;
  EXPECT_EQ(mod3->size(), (n - r % 3 + 2) / 3) << where;
  EXPECT_EQ(mod3->rank(), r / 3) << where;
  EXPECT_EQ(mod3->split_name(), "mod3");
  for (int i = 0; i < mod3->size(); ++i) EXPECT_EQ(mod3->world_rank(i), r % 3 + 3 * i) << where;
  EXPECT_EQ(&mod3->scope(), &t.scope()) << "a sub-transport shares its parent's call scope";
  EXPECT_EQ(&mod3->memory(), &t.memory()) << "a sub-transport shares its parent's memory space";
  EXPECT_EQ(mod3->backend(), t.backend());

  // 2. rank 0 alone, the others with keys reversing their order.
  Transport* rev = t.split("reversed", r < 1 ? 0 : 1, -r);
  ASSERT_NE(rev, nullptr) << where;
  EXPECT_EQ(rev->size(), r < 1 ? 1 : n - 1) << where;
  EXPECT_EQ(rev->rank(), r < 1 ? 0 : n - 1 - r) << where;
  EXPECT_EQ(rev->world_rank(rev->rank()), r) << where;

  // 3. Even ranks join no group.
  Transport* odd = t.split("odd", r % 2 ? 7 : Transport::kNoColor, n - r);
  if (r % 2 == 0) {
    EXPECT_EQ(odd, nullptr) << where;
  } else {
    ASSERT_NE(odd, nullptr) << where;
    EXPECT_EQ(odd->size(), n / 2) << where;
    EXPECT_EQ(odd->rank(), (n / 2) - 1 - (r - 1) / 2) << where;  // reversed by the key
  }

  // Cached: the same name returns the same transport (or none) without communicating; a
  // different partition under a cached name is refused.
  EXPECT_EQ(t.split("mod3", r % 3, r), mod3);
  EXPECT_EQ(t.split("reversed", r < 1 ? 0 : 1, -r), rev);
  EXPECT_EQ(t.split("odd", r % 2 ? 7 : Transport::kNoColor, n - r), odd);
  EXPECT_THROW(t.split("mod3", r % 3 + 1, r), Error);

  // Messages stay in their group and never match the parent's: a parent receive on the same
  // tag is posted first, so a message crossing over would land in it (or in the wrong ring).
  int parent_in = -1;
  const int parent_out = 1000 + r;
  Request parent_recv;
  if (n > 1) parent_recv = t.irecv(&parent_in, sizeof parent_in, (r + n - 1) % n, 5);
  expect_ring_in(*mod3, where + " mod3");
  expect_ring_in(*rev, where + " reversed");
  if (odd) expect_ring_in(*odd, where + " odd");
  if (n > 1) {
    Request parent_send = t.isend(&parent_out, sizeof parent_out, (r + 1) % n, 5);
    std::array<Request, 2> rs{parent_recv, parent_send};
    t.wait_all(rs);
    EXPECT_EQ(parent_in, 1000 + (r + n - 1) % n) << where;
  }

  // Barriers per group, repeatedly, interleaved with the parent's.
  for (int i = 0; i < 3; ++i) {
    mod3->barrier();
    rev->barrier();
    if (odd) odd->barrier();
    t.barrier();
  }

  // A split of a split: world ranks compose through the parent.
  Transport* half = mod3->split("mod3/half", mod3->rank() % 2, 0);
  ASSERT_NE(half, nullptr) << where;
  EXPECT_EQ(half->rank(), mod3->rank() / 2) << where;
  for (int i = 0; i < half->size(); ++i) EXPECT_EQ(half->world_rank(i), r % 3 + 3 * (mod3->rank() % 2 + 2 * i)) << where;
  expect_ring_in(*half, where + " mod3/half");
  EXPECT_EQ(&half->scope(), &t.scope());

  // An error raised in a sub-transport carries the call set on the parent's scope, its own
  // (sub) rank and peer, the split's name and the world ranks.
  const CallInfo before = t.scope().call();
  t.scope().set_call({"allreduce", "split-test", 4096, 2, "timed"});
  try {
    int x = 0;
    (void)rev->irecv(&x, sizeof x, rev->size(), 0);  // no such peer
    ADD_FAILURE() << "expected an Error for an invalid peer";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("op=allreduce algo=split-test size=4096 phase=timed iteration=2"), std::string::npos) << what;
    EXPECT_NE(what.find("rank=" + std::to_string(rev->rank())), std::string::npos) << what;
    EXPECT_NE(what.find("split=reversed world_rank=" + std::to_string(r)), std::string::npos) << what;
  }
  t.scope().set_call(before);
  t.barrier();
}

}  // namespace collbench::testing
