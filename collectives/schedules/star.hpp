#pragma once
// The root's side of the naive one-to-all and all-to-one algorithms (broadcast, scatter,
// gather): one request per other rank, all in flight at once — in windows of
// kRequestWindow, so nothing is allocated per call — with the root's own local copy
// overlapping the first window instead of preceding it.
#include <array>
#include <span>

#include "collectives/schedules/defaults.hpp"
#include "collectives/transport/transport.hpp"

namespace collbench::schedules::star {

// post(p) starts the root's transfer with rank p and returns its request; local() is the
// root's own part, run once while the first window is in flight.
template <class Post, class Local>
void at_root(Transport& t, Post&& post, Local&& local) {
  const int n = t.size(), me = t.rank();
  std::array<Request, kRequestWindow> rs{};
  std::size_t k = 0;
  bool local_done = false;
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    rs[k++] = post(p);
    if (k == rs.size()) {
      if (!local_done) local();
      local_done = true;
      t.wait_all(rs);
      k = 0;
    }
  }
  if (!local_done) local();
  t.wait_all(std::span(rs.data(), k));
}

}  // namespace collbench::schedules::star
