// Gloo's other algorithms as library variants ("library:ring", "library:halving_doubling" ...),
// measured when named or through "library:all", next to "library" (the calls PyTorch 1.13 makes,
// gloo_library.cpp) and collbench's own algorithms.
//
//   allreduce       library:ring              gloo::AllreduceRing<T>
//                   library:ring_chunked      gloo::AllreduceRingChunked<T>
//                   library:halving_doubling  gloo::AllreduceHalvingDoubling<T>
//                   library:bcube             gloo::AllreduceBcube<T>
//                   library:bcube_opts        gloo::allreduce(AllreduceOptions) with
//                                             setAlgorithm(BCUBE): the options API's other algorithm
//   broadcast       library:one_to_all        gloo::BroadcastOneToAll<T>
//   allgather       library:ring              gloo::AllgatherRing<T>
// reduce_scatter's only Gloo algorithm (ReduceScatterHalvingDoubling) is already its "library";
// Gloo has no algorithm class for gather, scatter, reduce or alltoall (the options API's, their
// "library", are all it has).
//
// The algorithm classes (Gloo's older API) take a context, pointers and a count; their
// constructors take slots from the context's counter, register their buffers with the pairs and
// allocate scratch, so each is constructed once per case (`prepare`) on the transport's
// library_context(1), a context of their own, and the timed call is run(). They work in place
// on the pointers they were given: out of place, the input is copied into the output first (the
// copy is in the timed call; the broadcast class takes the root's input as its source pointer and
// copies it to the output itself). RedOp::avg is applied inside the bound call (AvgAround), so
// the class is not constructed per call.
//
// Measured here (Debian's Gloo 0.0~git20220518, 1-5 ranks, counts 0, 1, n-1, 1000, 7n+3,
// in and out of place, each binding run 30-200 times back to back; 6-8 ranks for some):
// AllreduceBcube returns wrong sums at world sizes other than powers of two (3, 5, 6: it groups
// ranks by the context's base, 2), and at 4 and 8 ranks when calls follow each other (its
// all-gather's later steps send no "buffer free" notification): it is offered at 1 and 2 ranks
// only (the options API's BCUBE, library:bcube_opts, has neither problem); AllgatherRing
// cannot be made at 1 rank (its constructor asks for the missing left/right pair: an enforce
// failure) and with 0 elements copies from a null pointer (UBSan) and never completes at 3+ ranks
// (a read timeout): it refuses 0 elements; the others run every
// case. Their int counts limit them to 2^31 bytes. AllgatherRing lets peers write into its
// output whenever they get ahead: it gathers into a buffer of its own here (bind_allgather_ring).
#include <gloo/allgather_ring.h>
#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/broadcast_one_to_all.h>

#include <algorithm>
#include <string>
#include <utility>

#include "collectives/backends/gloo/gloo_library.hpp"

namespace collbench::gloo_variants {
namespace {

using namespace gloo_library;
using Why = std::optional<std::string>;

// ---- allreduce: the four algorithm classes ------------------------------------------------

// The static texts a blocking call publishes for the watchdog, per class (string literals: the
// watchdog reads them from another thread while the call runs).
template <template <class> class Algo>
struct AllreduceClass;
#define CB_GLOO_ALLREDUCE_CLASS(Class)                                                          \
  template <>                                                                                  \
  struct AllreduceClass<gloo::Class> {                                                         \
    static constexpr const char* make = "making gloo::" #Class;                                \
    static constexpr const char* run = "in gloo::" #Class "::run (some rank never arrived)";  \
  };
CB_GLOO_ALLREDUCE_CLASS(AllreduceRing)
CB_GLOO_ALLREDUCE_CLASS(AllreduceRingChunked)
CB_GLOO_ALLREDUCE_CLASS(AllreduceHalvingDoubling)
CB_GLOO_ALLREDUCE_CLASS(AllreduceBcube)
#undef CB_GLOO_ALLREDUCE_CLASS

template <template <class> class Algo>
PreparedCall bind_allreduce_class(Transport& t, const CollArgs& a) {
  using Names = AllreduceClass<Algo>;
  const Bound b = bound(t, 1);
  check_class_op(a.op);
  MemorySpace& m = t.memory();
  const AvgAround avg(m, a, b.size);
  return visit_gloo_type(a.dtype, [&](auto tag) -> PreparedCall {
    using T = typename decltype(tag)::type;
    T* buf = static_cast<T*>(a.recv);  // the class reduces in place in the output
    std::shared_ptr<Algo<T>> algo;
    blocking(b, Names::make, [&] {
      algo = std::make_shared<Algo<T>>(b.ctx, std::vector<T*>{buf}, static_cast<int>(a.count),
                                       class_reduction<T>(a.op.kind));
    });
    return [b, algo, avg, buf, send = a.send, count = a.count] {
      avg.in(buf, send, count);  // out of place: the input copied (scaled for avg) into the output
      blocking(b, Names::run, [&] { algo->run(); });
      avg.out(buf, count);
    };
  });
}

Why allreduce_class_supports(int, const CollArgs& a) {
  if (a.dtype == DType::bfloat16) return "Gloo has no bfloat16 arithmetic";
  if (over_int_bytes(a.count, a.dtype))
    return "Gloo's allreduce classes keep counts and byte sizes in an int: count x element size must stay below 2^31";
  return std::nullopt;
}

Why bcube_supports(int n, const CollArgs& a) {
  if (n & (n - 1))
    return "gloo::AllreduceBcube (base 2) returns wrong sums unless the world size is a power of two (measured at 3, 5 "
           "and 6)";
  if (n > 2)
    return "gloo::AllreduceBcube called back to back returns wrong sums at 4+ ranks: its all-gather sends no 'buffer "
           "free' notification after steps above 0, so a peer's next call overwrites a receive buffer still being read "
           "(measured at 4 and 8); usable at 1 and 2 ranks only";
  return allreduce_class_supports(n, a);
}

Why bcube_opts_supports(int, const CollArgs& a) {
  if (a.dtype == DType::bfloat16) return "Gloo has no bfloat16 arithmetic";
  return std::nullopt;
}

PreparedCall bind_bcube_opts(Transport& t, const CollArgs& a) { return bind_allreduce(t, a, /*bcube=*/true); }

// ---- broadcast: BroadcastOneToAll ----------------------------------------------------------

// The root sends its whole buffer to every other rank (each first tells the root it is ready),
// then copies it locally. Out of place, the root's source pointer is its input and the class
// copies it to the output (its own multi-pointer copy); elsewhere the output receives.
PreparedCall bind_one_to_all(Transport& t, const CollArgs& a) {
  const Bound b = bound(t, 1);
  const bool root = b.rank == a.root;
  return visit_gloo_type(
      a.dtype,
      [&](auto tag) -> PreparedCall {
        using T = typename decltype(tag)::type;
        std::vector<T*> ptrs{static_cast<T*>(a.recv)};
        if (root && a.send != a.recv) ptrs = {typed<T>(a.send), static_cast<T*>(a.recv)};
        std::shared_ptr<gloo::BroadcastOneToAll<T>> algo;
        blocking(b, "making gloo::BroadcastOneToAll", [&] {
          algo = std::make_shared<gloo::BroadcastOneToAll<T>>(b.ctx, ptrs, a.count, a.root, 0);
        });
        return [b, algo] { blocking(b, "in gloo::BroadcastOneToAll::run (some rank never arrived)", [&] { algo->run(); }); };
      },
      /*bits16=*/true);
}

// ---- allgather: AllgatherRing --------------------------------------------------------------

// n-1 ring steps of one chunk each, every step waiting for the right neighbour's notification.
// The class's output is registered with the pairs once, at construction, and a peer writes its
// chunks there as soon as it starts its next call: with the caller's output as that buffer, a
// rank that refills its output between calls (collbench's verification does) overwrites chunks
// a faster peer already delivered (measured: sentinels left at 3 ranks). So the class gathers
// into a buffer of its own, copied out after each call, as ProcessGroupGloo's allgather copies
// out of its flat tensor. In place, the input is the rank's chunk of the output.
PreparedCall bind_allgather_ring(Transport& t, const CollArgs& a) {
  const Bound b = bound(t, 1);
  const std::size_t all = a.count * static_cast<std::size_t>(b.size);
  auto gathered = std::make_shared<Buffer>(t.memory(), a.bytes(std::max<std::size_t>(all, 1)));
  return visit_gloo_type(
      a.dtype,
      [&](auto tag) -> PreparedCall {
        using T = typename decltype(tag)::type;
        std::shared_ptr<gloo::AllgatherRing<T>> algo;
        blocking(b, "making gloo::AllgatherRing", [&] {
          algo = std::make_shared<gloo::AllgatherRing<T>>(b.ctx, std::vector<const T*>{static_cast<const T*>(a.send)},
                                                          static_cast<T*>(gathered->data()), static_cast<int>(a.count));
        });
        return [b, algo, gathered, m = &t.memory(), out = a.recv, bytes = a.bytes(all)] {
          blocking(b, "in gloo::AllgatherRing::run (some rank never arrived)", [&] { algo->run(); });
          m->copy(out, gathered->data(), bytes);
        };
      },
      /*bits16=*/true);
}

Why allgather_ring_supports(int n, const CollArgs& a) {
  if (n == 1) return "gloo::AllgatherRing needs a left and a right neighbour: at 1 rank its constructor fails (pair missing)";
  if (a.count == 0)
    return "gloo::AllgatherRing with 0 elements copies from a null pointer (undefined behaviour, UBSan) and never "
           "completes at 3+ ranks (measured: a read timeout)";
  if (over_int_bytes(a.count * static_cast<std::size_t>(n), a.dtype))
    return "gloo::AllgatherRing keeps byte sizes in an int: world size x count x element size must stay below 2^31";
  return std::nullopt;
}

// ---- the table -----------------------------------------------------------------------------

template <PreparedCall (*Bind)(Transport&, const CollArgs&)>
PreparedCall prepare(Transport& t, const CollArgs& a) {
  return Bind(t, a);
}
template <PreparedCall (*Bind)(Transport&, const CollArgs&)>
void run(Transport& t, const CollArgs& a) {
  Bind(t, a)();
}

struct Variant {
  Op op;
  const char* name;  // library:<name>
  const char* gloo_call;
  const char* description;
  const char* requirements;
  CollFn run;
  SupportFn supports;
  PrepareFn prepare;
  bool native_avg;  // the classes apply avg themselves (AvgAround); the options API leaves it to run_entry
};

constexpr const char* kClassReq =
    "gloo backend, host memory; any world size, any count (count x element size < 2^31 bytes); no bfloat16";

constexpr Variant kVariants[] = {
    {Op::allreduce, "ring", "gloo::AllreduceRing<T> (algorithm class, constructed once per case)",
     "gloo::AllreduceRing: n-1 steps passing whole buffers around the ring (no reduce-scatter); out of place through a "
     "copy into the output",
     kClassReq, &run<bind_allreduce_class<gloo::AllreduceRing>>, &allreduce_class_supports,
     &prepare<bind_allreduce_class<gloo::AllreduceRing>>, true},
    {Op::allreduce, "ring_chunked", "gloo::AllreduceRingChunked<T> (algorithm class, constructed once per case)",
     "gloo::AllreduceRingChunked: ring reduce-scatter + allgather in chunks, two in flight; out of place through a copy",
     kClassReq, &run<bind_allreduce_class<gloo::AllreduceRingChunked>>, &allreduce_class_supports,
     &prepare<bind_allreduce_class<gloo::AllreduceRingChunked>>, true},
    {Op::allreduce, "halving_doubling", "gloo::AllreduceHalvingDoubling<T> (algorithm class, constructed once per case)",
     "gloo::AllreduceHalvingDoubling: recursive halving + doubling in binary blocks (any world size); out of place "
     "through a copy",
     kClassReq, &run<bind_allreduce_class<gloo::AllreduceHalvingDoubling>>, &allreduce_class_supports,
     &prepare<bind_allreduce_class<gloo::AllreduceHalvingDoubling>>, true},
    {Op::allreduce, "bcube", "gloo::AllreduceBcube<T> (algorithm class, constructed once per case)",
     "gloo::AllreduceBcube: reduce-scatter + allgather among groups of base 2; out of place through a copy",
     "gloo backend, host memory; 1 or 2 ranks (wrong sums elsewhere, measured); count x element size < 2^31 bytes; no "
     "bfloat16",
     &run<bind_allreduce_class<gloo::AllreduceBcube>>, &bcube_supports, &prepare<bind_allreduce_class<gloo::AllreduceBcube>>,
     true},
    {Op::allreduce, "bcube_opts", "gloo::allreduce(AllreduceOptions) with setAlgorithm(BCUBE)",
     "gloo::allreduce with opts.setAlgorithm(BCUBE): the options API's other algorithm (PyTorch leaves it unset: ring)",
     "gloo backend, host memory; any world size, any count; no bfloat16", &run<bind_bcube_opts>, &bcube_opts_supports,
     &prepare<bind_bcube_opts>, false},
    {Op::broadcast, "one_to_all", "gloo::BroadcastOneToAll<T> (algorithm class, constructed once per case)",
     "gloo::BroadcastOneToAll: the root sends the whole buffer to every rank",
     "gloo backend, host memory; any world size, any root, any count", &run<bind_one_to_all>, nullptr,
     &prepare<bind_one_to_all>, false},
    {Op::allgather, "ring", "gloo::AllgatherRing<T> (algorithm class, constructed once per case)",
     "gloo::AllgatherRing: n-1 ring steps of one chunk, each acknowledged by the right neighbour; into a buffer of its "
     "own, copied out",
     "gloo backend, host memory; at least 2 ranks; count >= 1 at 3+ ranks; world size x count x element size < 2^31 "
     "bytes",
     &run<bind_allgather_ring>, &allgather_ring_supports, &prepare<bind_allgather_ring>, false},
};

template <std::size_t I>
LibraryConfig config(const AlgoEntry&, const CollArgs&) {
  constexpr const Variant& v = kVariants[I];
  const std::string none = std::string(v.op == Op::allreduce && std::string_view(v.name) == "bcube_opts"
                                           ? "none: ProcessGroupGloo leaves AllreduceOptions' algorithm unset (ring)"
                                           : "none: ProcessGroupGloo (1.13) does not use Gloo's algorithm classes");
  return {{"pytorch_call", none}, {"gloo_call", v.gloo_call}};
}

template <std::size_t... I>
bool register_all(std::index_sequence<I...>) {
  (Registry::add(AlgoEntry{kVariants[I].op, std::string("library:") + kVariants[I].name, "gloo", kVariants[I].description,
                           kVariants[I].requirements, kVariants[I].run, kVariants[I].supports, nullptr,
                           kVariants[I].native_avg, &config<I>, /*on_request=*/true, kVariants[I].prepare}),
   ...);
  return true;
}

[[maybe_unused]] const bool registered = register_all(std::make_index_sequence<std::size(kVariants)>{});

}  // namespace
}  // namespace collbench::gloo_variants
