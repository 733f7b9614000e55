// Pipelined ring phases. Each of the n-1 steps of a phase moves one chunk to the next rank;
// every chunk is cut into the same number of segments `nseg`, and a phase is a stream of
// units u = step * nseg + segment. Segment k of step s can leave as soon as segment k of
// step s-1 has arrived (and been reduced), so while one segment is reduced the next ones
// are already in flight, and no rank waits for a whole chunk. The allreduce chains both
// phases into one stream, so the same rule carries a final segment straight into the
// allgather.
#include "collectives/schedules/ring.hpp"

#include <algorithm>
#include <array>

#include "collectives/patterns/ring.hpp"
#include "collectives/schedules/defaults.hpp"
#include "collectives/schedules/tags.hpp"

namespace collbench::schedules::ring {

patterns::Range ChunkMap::operator()(int c) const {
  if (!blocks) return patterns::chunk(count, n, c);
  return {static_cast<std::size_t>(patterns::mod(c - 1, n)) * count, count};
}

std::size_t ChunkMap::largest() const { return blocks ? count : patterns::chunk(count, n, 0).count; }

namespace {

// Units in flight per direction; each holds one segment of receive scratch.
constexpr long kDepth = kSegmentsInFlight;

// Same segment count for every chunk, so both ends of a link cut a chunk identically even
// when chunk sizes differ by one; a segment of an empty chunk is empty on both ends and
// never sent.
struct Segments {
  long nseg;
  std::size_t max_elems;  // of any segment
  // Units in flight (stream() posts at most this far ahead), so receive slots: with fewer
  // segments than kDepth per chunk, scratch stays about one chunk instead of kDepth segments.
  long depth;

  Segments(const CollArgs& a, const ChunkMap& map) {
    nseg = static_cast<long>(patterns::num_segments(map.largest(), segment_elems(a, kRingSegmentBytes)));
    max_elems = patterns::chunk(map.largest(), static_cast<int>(nseg), 0).count;
    depth = std::min(kDepth, nseg);
  }
  // Segment k of ring chunk c, in elements of the whole buffer.
  patterns::Range of(const ChunkMap& map, int c, long k) const {
    const patterns::Range ch = map(c), s = patterns::chunk(ch.count, static_cast<int>(nseg), static_cast<int>(k));
    return {ch.offset + s.offset, s.count};
  }
};

// What every unit of a ring phase needs to know.
struct Ring {
  Ring(Transport& tr, const CollArgs& args, const ChunkMap& m)
      : t(tr), a(args), map(m), seg(args, m), n(tr.size()), me(tr.rank()) {}
  Transport& t;
  const CollArgs& a;
  const ChunkMap& map;
  Segments seg;
  int n, me;

  long units() const { return (n - 1) * seg.nseg; }
  int step(long u) const { return static_cast<int>(u / seg.nseg); }
  patterns::Range range(int chunk, long u) const { return seg.of(map, chunk, u % seg.nseg); }
};

struct RecvMsg {
  void* ptr;
  std::size_t bytes;  // 0: an empty segment, not sent
  int tag;
};
struct SendMsg {
  const void* ptr;
  std::size_t bytes;
  int tag;
};

// Reduce-scatter units: a segment arrives in a scratch slot and is reduced with this rank's
// contribution; the result is forwarded one step later.
class ReduceScatterUnits {
 public:
  // `partials` (laid out by the map) receives the partial results; null: a scratch ping-pong.
  ReduceScatterUnits(const Ring& ring, const void* in, void* partials, void* owned)
      : r_(ring), in_(in), partials_(partials), owned_(owned) {
    const std::size_t es = ring.a.elem_size();
    slots_ = ring.a.scratch(ring.seg.depth * ring.seg.max_elems * es, 0);
    // The partial of step s goes to half s % 2: it is sent at step s + 1 and dead after that.
    // With 2 ranks the only step's partial is final and goes straight to `owned`. Segment k
    // has its own place in a half (k · max_elems): with chunks of different lengths, segment k
    // of one chunk and k + 1 of another overlap by an element, and k + 1's send may still read.
    half_elems_ = static_cast<std::size_t>(ring.seg.nseg) * ring.seg.max_elems;
    if (!partials_ && ring.n > 2) pingpong_ = ring.a.scratch(2 * half_elems_ * es, 1);
  }
  RecvMsg recv(long u) const {
    const patterns::Range r = r_.range(patterns::rs_recv_chunk(r_.me, r_.step(u), r_.n), u);
    return {slot(u), r_.a.bytes(r.count), tag::reduce_scatter};
  }
  SendMsg send(long u) const {
    const int s = r_.step(u), c = patterns::rs_send_chunk(r_.me, s, r_.n);
    const patterns::Range r = r_.range(c, u);
    // Step 0 sends this rank's own contribution straight from the input: no copy.
    return {s == 0 ? elem_ptr(in_, r.offset, r_.a.dtype) : partial(s - 1, c, r, u), r_.a.bytes(r.count),
            tag::reduce_scatter};
  }
  void arrived(long u) const {
    const int s = r_.step(u), c = patterns::rs_recv_chunk(r_.me, s, r_.n);
    const patterns::Range r = r_.range(c, u);
    if (r.count)
      r_.t.memory().reduce(r_.a.op, partial(s, c, r, u), elem_ptr(in_, r.offset, r_.a.dtype), slot(u), r.count);
  }

 private:
  // Unit u + depth reuses u's slot: stream() posts its receive only after u has arrived.
  void* slot(long u) const { return elem_ptr(slots_, (u % r_.seg.depth) * r_.seg.max_elems, r_.a.dtype); }
  // Where step s puts its partial of segment r (buffer elements) of chunk c, unit u's segment.
  void* partial(int s, int c, patterns::Range r, long u) const {
    if (s == r_.n - 2) return elem_ptr(owned_, r.offset - r_.map(c).offset, r_.a.dtype);
    if (partials_) return elem_ptr(partials_, r.offset, r_.a.dtype);
    const auto k = static_cast<std::size_t>(u % r_.seg.nseg);
    return elem_ptr(pingpong_, (s % 2) * half_elems_ + k * r_.seg.max_elems, r_.a.dtype);
  }

  const Ring& r_;
  const void* in_;
  void* partials_;
  void* owned_;
  void* slots_ = nullptr;
  void* pingpong_ = nullptr;
  std::size_t half_elems_ = 0;  // one ping-pong half: every segment's place
};

// Allgather units: a segment arrives straight in its final place and is forwarded from there.
class AllgatherUnits {
 public:
  AllgatherUnits(const Ring& ring, void* buf) : r_(ring), buf_(buf) {}
  RecvMsg recv(long u) const {
    const patterns::Range r = r_.range(patterns::ag_recv_chunk(r_.me, r_.step(u), r_.n), u);
    return {elem_ptr(buf_, r.offset, r_.a.dtype), r_.a.bytes(r.count), tag::allgather};
  }
  SendMsg send(long u) const {
    const patterns::Range r = r_.range(patterns::ag_send_chunk(r_.me, r_.step(u), r_.n), u);
    return {elem_ptr(buf_, r.offset, r_.a.dtype), r_.a.bytes(r.count), tag::allgather};
  }
  void arrived(long) const {}

 private:
  const Ring& r_;
  void* buf_;
};

// The reduce-scatter's units followed by the allgather's.
struct ChainedUnits {
  const ReduceScatterUnits& rs;
  const AllgatherUnits& ag;
  long split;  // units of the reduce-scatter
  RecvMsg recv(long u) const { return u < split ? rs.recv(u) : ag.recv(u - split); }
  SendMsg send(long u) const { return u < split ? rs.send(u) : ag.send(u - split); }
  void arrived(long u) const {
    if (u < split) rs.arrived(u);
    else ag.arrived(u - split);
  }
};

// The last kDepth requests of one direction; unit u uses slot u % kDepth. A slot is reused
// only after its request was waited, so a unit not found in its slot has completed.
class Window {
 public:
  Window() { unit_.fill(-1); }
  // Waits for the request in u's slot, then makes the slot u's.
  Request& claim(Transport& t, long u) {
    const long i = u % kDepth;
    t.wait(reqs_[i]);
    unit_[i] = u;
    return reqs_[i];
  }
  void finish(Transport& t, long u) {
    if (u >= 0 && unit_[u % kDepth] == u) t.wait(reqs_[u % kDepth]);
  }
  void finish_all(Transport& t) {
    for (Request& r : reqs_) t.wait(r);
  }

 private:
  std::array<Request, kDepth> reqs_{};
  std::array<long, kDepth> unit_{};
};

// Buffer reuse between units: recv(u) / arrived(u) overwrites what the send of unit
// u - distance read, so that send must have completed first (0: no such reuse).
struct Reuse {
  long before_recv = 0;
  long before_arrival = 0;
};

// The loop every phase runs. Receives and sends are posted up to min(kDepth, nseg) units
// ahead of arrivals (unit u's send carries what unit u - nseg brought). Every wait is for a
// neighbour's unit with a smaller index, so the ring cannot deadlock — also under NCCL's
// model, where a wait launches everything posted as one group: a receive posted further
// ahead than the neighbour can send before its own next wait would stall that group.
template <class Units>
void stream(Transport& t, const Units& units, long total, long nseg, Reuse reuse) {
  const int prev = patterns::ring_prev(t.rank(), t.size()), next = patterns::ring_next(t.rank(), t.size());
  Window recvs, sends;
  const long ahead = std::min(kDepth, nseg);  // = Segments::depth
  long next_recv = 0, next_send = 0;
  auto pump = [&](long done) {  // units [0, done) have arrived
    for (;;) {
      // Receives first; one that overwrites what a send read waits until that send is posted.
      if (next_recv < total && next_recv < done + ahead &&
          (reuse.before_recv == 0 || next_recv - reuse.before_recv < next_send)) {
        if (reuse.before_recv) sends.finish(t, next_recv - reuse.before_recv);
        const RecvMsg m = units.recv(next_recv);
        recvs.claim(t, next_recv++) = m.bytes ? t.irecv(m.ptr, m.bytes, prev, m.tag) : Request{};
      } else if (next_send < total && next_send < done + ahead) {
        const SendMsg m = units.send(next_send);
        sends.claim(t, next_send++) = m.bytes ? t.isend(m.ptr, m.bytes, next, m.tag) : Request{};
      } else {
        return;
      }
    }
  };
  pump(0);
  for (long u = 0; u < total; ++u) {
    recvs.finish(t, u);
    if (reuse.before_arrival) sends.finish(t, u - reuse.before_arrival);
    units.arrived(u);
    pump(u + 1);
  }
  sends.finish_all(t);
}

}  // namespace

void reduce_scatter(Transport& t, const CollArgs& a, const ChunkMap& map, const void* in, void* owned, void* partials) {
  if (t.size() == 1 || map.count == 0) return;
  const Ring ring(t, a, map);
  const ReduceScatterUnits rs(ring, in, partials, owned);
  // A ping-pong half is rewritten two steps after it was written, once its send is done.
  stream(t, rs, ring.units(), ring.seg.nseg, {.before_arrival = ring.seg.nseg});
}

void allgather(Transport& t, const CollArgs& a, const ChunkMap& map, void* buf) {
  if (t.size() == 1 || map.count == 0) return;
  const Ring ring(t, a, map);
  stream(t, AllgatherUnits(ring, buf), ring.units(), ring.seg.nseg, {});
}

void reduce_scatter_allgather(Transport& t, const CollArgs& a, const ChunkMap& map, const void* in, void* buf) {
  if (t.size() == 1 || map.count == 0) return;
  const Ring ring(t, a, map);
  void* owned = elem_ptr(buf, map(patterns::rs_owned_chunk(ring.me, ring.n)).offset, a.dtype);
  const ReduceScatterUnits rs(ring, in, buf, owned);
  const AllgatherUnits ag(ring, buf);
  // Allgather step s receives the chunk this rank sent at reduce-scatter step s (the same
  // segment, ring.units() earlier): that send must be done before its place is overwritten.
  stream(t, ChainedUnits{rs, ag, ring.units()}, 2 * ring.units(), ring.seg.nseg, {.before_recv = ring.units()});
}

}  // namespace collbench::schedules::ring
