// The Gloo library's collectives as registry entries (algo "library", backend "gloo"): for each
// op, exactly the Gloo call PyTorch's ProcessGroupGloo makes for a dense CPU tensor, so
// `--backend gloo --algo library` measures what dist.all_reduce & co. cost on "cpu:gloo".
//
// Source read: PyTorch's torch/csrc/distributed/c10d/ProcessGroupGloo.cpp, in the pytorch/pytorch
// snapshot 0069b72918a5 (a tree from before 1.13: it still includes <c10d/...>; no 1.13 copy
// was at hand). The paths below are the ones PyTorch 1.13 takes: its Gloo backend still raises
// for _allgather_base / all_gather_into_tensor ("no support for _allgather_base in Gloo process
// group", from 1.13's distributed_c10d.py) and for reduce_scatter ("ProcessGroupGloo does not
// support reduce_scatter"), and bfloat16 joined its GENERATE_ALL_TYPES only later (2.x trees
// list it). Per call ProcessGroupGloo builds a fresh options object on the group's context with
// the next tag (nextTag(): a counter of the process group), sets inputs/outputs/root/reduce
// function and calls Gloo:
//   dist.broadcast        AsyncBroadcastWork   gloo::broadcast(BroadcastOptions), output only (in place)
//   dist.reduce           AsyncReduceWork      gloo::reduce(ReduceOptions), output only (in place)
//   dist.all_reduce       AsyncAllreduceWork   gloo::allreduce(AllreduceOptions), outputs only, no
//                                              algorithm set (Gloo's ring, 1 MiB segments at most)
//   dist.gather           AsyncGatherWork      gloo::gather into a new flat tensor at the root,
//                                              then copied out to the output list
//   dist.all_gather       AsyncAllgatherWork   gloo::allgather into a new flat tensor, then copied
//                                              out to the output list
//   dist.scatter          AsyncScatterWork     gloo::scatter(ScatterOptions), one input per rank
//   dist.all_to_all_single (no splits)  AsyncAlltoallWork  gloo::alltoall(AlltoallOptions)
//   dist.reduce_scatter   raises               (library here: gloo::ReduceScatterHalvingDoubling)
// Element types: GENERATE_ALL_TYPES (float, double, half, int8, uint8, int32, int64: no
// bfloat16, which raises "Invalid scalar type"); reduce functions: toFunction<T>, gloo::sum /
// product / min / max<T>; ReduceOp.AVG raises ("Cannot use ReduceOp.AVG with Gloo"), so avg is
// applied around the sum by run_entry as for MPI (native_avg false; reduce_scatter's class applies
// it itself, AvgAround). The options' timeout: ProcessGroupGloo leaves each options object its
// default, the context's timeout (context->setTimeout(options->timeout)); here each is given
// the call scope's (the run's --timeout), read when the case is bound.
//
// Not reproduced (costs PyTorch adds around the same Gloo call): the hand-off of each call to
// one of ProcessGroupGloo's worker threads and the caller's wait for it, and the allocation of
// the flat tensor gather/all_gather make per call (newLikeFlat): the flat buffer here is
// allocated once per case, its copy-out is in every call.
//
// In place (collbench's convention, op_traits.hpp) is PyTorch's own form for broadcast, reduce
// and all_reduce (the tensor is input and output). Out of place, the same Gloo call is given the
// input apart (options setInput; Gloo copies it at the root / reduces from it): no extra copy.
// alltoall in place is refused: gloo::alltoall reads its input while writing its output, and
// one buffer as both returns wrong data (measured).
#include "collectives/backends/gloo/gloo_library.hpp"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <gloo/context.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/scatter.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <type_traits>
#include <vector>

namespace collbench {
namespace gloo_library {

GlooTransport& gloo(Transport& t) {
  auto* g = dynamic_cast<GlooTransport*>(&t);
  if (g == nullptr)
    throw NotSupported("Gloo library collectives need the gloo backend (this transport is " + std::string(t.backend()) +
                           "'s)",
                       t.error_context());
  if (g->memory().kind() != MemoryKind::host)
    throw NotSupported("Gloo library collectives run on host memory only", t.error_context());
  return *g;
}

Bound bound(Transport& t, int which_context) {
  GlooTransport& g = gloo(t);
  Bound b;
  b.t = &g;
  b.scope = &g.scope();
  b.ctx = g.library_context(which_context);
  b.timeout = g.scope().timeout();
  b.rank = g.rank();
  b.size = g.size();
  return b;
}

namespace {

bool says_timeout(const char* what) {
  return std::strstr(what, "Timed out") != nullptr || std::strstr(what, "timeout") != nullptr ||
         std::strstr(what, "Timeout") != nullptr;
}

}  // namespace

void rethrow_as_collbench(const Bound& b, const char* what) {
  std::string call = what;  // "in gloo::allreduce", without the watchdog's "(some rank never arrived)"
  if (const auto p = call.find(" (some rank"); p != std::string::npos) call.resize(p);
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const gloo::IoException& e) {
    if (says_timeout(e.what()))
      throw TimeoutError(timeout_message(b.timeout, -1, false, what) + " (Gloo: " + e.what() + ")", b.t->error_context());
    throw TransportError("Gloo failed " + call + " (a peer exited or was killed?): " + e.what(), b.t->error_context());
  } catch (const gloo::Exception& e) {
    throw TransportError("Gloo failed " + call + ": " + e.what(), b.t->error_context());
  } catch (const gloo::EnforceNotMet& e) {
    throw TransportError("Gloo refused the call " + call + ": " + e.what(), b.t->error_context());
  }
}

std::optional<std::string> pytorch_dtype(DType t) {
  if (t == DType::bfloat16)
    return "PyTorch 1.13's ProcessGroupGloo has no bfloat16 (its types: float32, float64, float16, int8, uint8, int32, "
           "int64; bfloat16 raises 'Invalid scalar type'), and Gloo no bfloat16 arithmetic";
  return std::nullopt;
}

namespace {

template <class T>
ReduceFunc typed_reduce_func(RedOp kind) {
  switch (kind) {
    case RedOp::sum: return &gloo::sum<T>;
    case RedOp::prod: return &gloo::product<T>;
    case RedOp::max: return &gloo::max<T>;
    case RedOp::min: return &gloo::min<T>;
    case RedOp::avg: break;
  }
  return nullptr;
}

}  // namespace

ReduceFunc reduce_func(const ReduceOp& op) {
  if (op.kind == RedOp::avg) throw Error("avg reached a Gloo library call: it is applied around it (run_entry)");
  if (op.host_fn != host_reduce_fn(op.kind, op.dtype))
    throw NotSupported("the Gloo library path cannot apply a custom reduce kernel");
  return visit_gloo_type(op.dtype, [&](auto tag) { return typed_reduce_func<typename decltype(tag)::type>(op.kind); });
}

void check_class_op(const ReduceOp& op) {
  if (op.host_fn != host_reduce_fn(op.kind, op.dtype))
    throw NotSupported("the Gloo library path cannot apply a custom reduce kernel");
  if (op.dtype == DType::bfloat16) throw NotSupported("Gloo has no bfloat16 arithmetic");
}

bool over_int_bytes(std::size_t elems, DType t) {
  return elems > static_cast<std::size_t>(INT_MAX) / dtype_size(t);
}

// ---- the calls, each bound once per case (prepare) ----------------------------------------
// What a bound call resolves once: the context, pointers, element type, reduce function; per
// call only what ProcessGroupGloo does per call: a new options object with the next tag and the
// timeout, its buffers (createUnboundBuffer inside setInput/setOutput), the Gloo call.

PreparedCall bind_allreduce(Transport& t, const CollArgs& a, bool bcube) {
  const Bound b = bound(t, 0);
  const ReduceFunc fn = reduce_func(a.op);
  const bool ip = a.send == a.recv;
  return visit_gloo_type(a.dtype, [&](auto tag) -> PreparedCall {
    using T = typename decltype(tag)::type;
    T* in = ip ? nullptr : typed<T>(a.send);
    T* out = typed<T>(a.recv);
    return [b, fn, in, out, count = a.count, bcube] {
      blocking(b, bcube ? "in gloo::allreduce, BCUBE (some rank never arrived)" : "in gloo::allreduce (some rank never arrived)",
               [&] {
                 gloo::AllreduceOptions opts(b.ctx);
                 if (bcube) opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::BCUBE);
                 opts.setReduceFunction(gloo::AllreduceOptions::Func(fn));
                 opts.setTag(b.t->next_library_tag());
                 opts.setTimeout(b.timeout);
                 if (in) opts.setInput(in, count);
                 opts.setOutput(out, count);
                 gloo::allreduce(opts);
               });
    };
  });
}

namespace {

PreparedCall bind_bcast(Transport& t, const CollArgs& a) {
  const Bound b = bound(t, 0);
  const bool give_input = b.rank == a.root && a.send != a.recv;  // out of place at the root
  return visit_gloo_type(a.dtype, [&](auto tag) -> PreparedCall {
    using T = typename decltype(tag)::type;
    return [b, in = give_input ? typed<T>(a.send) : nullptr, out = typed<T>(a.recv), count = a.count, root = a.root] {
      blocking(b, "in gloo::broadcast (some rank never arrived)", [&] {
        gloo::BroadcastOptions opts(b.ctx);
        opts.setRoot(root);
        opts.setTag(b.t->next_library_tag());
        opts.setTimeout(b.timeout);
        if (in) opts.setInput(in, count);
        opts.setOutput(out, count);
        gloo::broadcast(opts);
      });
    };
  });
}

PreparedCall bind_reduce(Transport& t, const CollArgs& a) {
  const Bound b = bound(t, 0);
  const ReduceFunc fn = reduce_func(a.op);
  const bool ip = a.send == a.recv;
  return visit_gloo_type(a.dtype, [&](auto tag) -> PreparedCall {
    using T = typename decltype(tag)::type;
    return [b, fn, in = ip ? nullptr : typed<T>(a.send), out = typed<T>(a.recv), count = a.count, root = a.root] {
      blocking(b, "in gloo::reduce (some rank never arrived)", [&] {
        gloo::ReduceOptions opts(b.ctx);
        opts.setRoot(root);
        opts.setTag(b.t->next_library_tag());
        opts.setTimeout(b.timeout);
        opts.setReduceFunction(gloo::ReduceOptions::Func(fn));
        if (in) opts.setInput(in, count);
        opts.setOutput(out, count);
        gloo::reduce(opts);
      });
    };
  });
}

// The flat output tensor of gather / all_gather: one per bound call (PyTorch makes one per call).
std::shared_ptr<Buffer> flat_buffer(Transport& t, const CollArgs& a, std::size_t elems) {
  return std::make_shared<Buffer>(t.memory(), a.bytes(std::max<std::size_t>(elems, 1)));
}

PreparedCall bind_gather(Transport& t, const CollArgs& a) {
  const Bound b = bound(t, 0);
  const bool root = b.rank == a.root;
  const std::size_t all = a.count * static_cast<std::size_t>(b.size);
  auto flat = root ? flat_buffer(t, a, all) : nullptr;
  return visit_gloo_type(
      a.dtype,
      [&](auto tag) -> PreparedCall {
        using T = typename decltype(tag)::type;
        return [b, flat, m = &t.memory(), in = typed<T>(a.send), out = a.recv, count = a.count, all,
                bytes = a.bytes(all), root = a.root] {
          blocking(b, "in gloo::gather (some rank never arrived)", [&] {
            gloo::GatherOptions opts(b.ctx);
            opts.setRoot(root);
            opts.setTag(b.t->next_library_tag());
            opts.setTimeout(b.timeout);
            if (flat) opts.setOutput(static_cast<T*>(flat->data()), all);
            opts.setInput(in, count);
            gloo::gather(opts);
          });
          if (flat) m->copy(out, flat->data(), bytes);  // unflatten into the output list
        };
      });
}

PreparedCall bind_allgather(Transport& t, const CollArgs& a) {
  const Bound b = bound(t, 0);
  const std::size_t all = a.count * static_cast<std::size_t>(b.size);
  auto flat = flat_buffer(t, a, all);
  return visit_gloo_type(
      a.dtype,
      [&](auto tag) -> PreparedCall {
        using T = typename decltype(tag)::type;
        return [b, flat, m = &t.memory(), in = typed<T>(a.send), out = a.recv, count = a.count, all, bytes = a.bytes(all)] {
          blocking(b, "in gloo::allgather (some rank never arrived)", [&] {
            gloo::AllgatherOptions opts(b.ctx);
            opts.setTag(b.t->next_library_tag());
            opts.setTimeout(b.timeout);
            opts.setInput(in, count);
            opts.setOutput(static_cast<T*>(flat->data()), all);
            gloo::allgather(opts);
          });
          m->copy(out, flat->data(), bytes);  // unflatten into the output list
        };
      });
}

PreparedCall bind_scatter(Transport& t, const CollArgs& a) {
  const Bound b = bound(t, 0);
  const bool root = b.rank == a.root;
  return visit_gloo_type(
      a.dtype,
      [&](auto tag) -> PreparedCall {
        using T = typename decltype(tag)::type;
        std::vector<T*> inputs;  // the root's input list, one tensor per rank
        if (root)
          for (int r = 0; r < b.size; ++r) inputs.push_back(typed<T>(elem_ptr(a.send, r * a.count, a.dtype)));
        return [b, inputs = std::move(inputs), out = static_cast<T*>(a.recv), count = a.count, root = a.root] {
          blocking(b, "in gloo::scatter (some rank never arrived)", [&] {
            gloo::ScatterOptions opts(b.ctx);
            opts.setRoot(root);
            opts.setTag(b.t->next_library_tag());
            opts.setTimeout(b.timeout);
            if (!inputs.empty()) opts.setInputs(inputs, count);
            opts.setOutput(out, count);
            gloo::scatter(opts);
          });
        };
      });
}

PreparedCall bind_alltoall(Transport& t, const CollArgs& a) {
  const Bound b = bound(t, 0);
  if (a.send == a.recv && a.count > 0)  // (0 elements: both pointers may be null)
    throw NotSupported("gloo::alltoall reads its input while writing its output: one buffer as both returns wrong data "
                       "(measured), and ProcessGroupGloo passes it as given; in place refused",
                       t.error_context());
  const std::size_t all = a.count * static_cast<std::size_t>(b.size);
  return visit_gloo_type(
      a.dtype,
      [&](auto tag) -> PreparedCall {
        using T = typename decltype(tag)::type;
        return [b, in = typed<T>(a.send), out = static_cast<T*>(a.recv), all] {
          blocking(b, "in gloo::alltoall (some rank never arrived)", [&] {
            gloo::AlltoallOptions opts(b.ctx);
            opts.setTag(b.t->next_library_tag());
            opts.setTimeout(b.timeout);
            opts.setInput(in, all);
            opts.setOutput(out, all);
            gloo::alltoall(opts);
          });
        };
      });
}

// reduce_scatter: ProcessGroupGloo 1.13 raises, so "library" is Gloo's own reduce-scatter, the
// class gloo::ReduceScatterHalvingDoubling (recursive halving; non-power-of-two worlds in
// binary blocks), on library_context(1), constructed once per case. It reduces in place in one
// buffer of n*count elements and leaves rank r's chunk at the buffer's start: out of place the
// input is copied into a buffer of its own first (the class would overwrite it) and the chunk
// copied to the output after; in place it runs in the input buffer and the chunk moves to
// offset rank*count (nothing to move on rank 0).
PreparedCall bind_reduce_scatter(Transport& t, const CollArgs& a) {
  const Bound b = bound(t, 1);
  check_class_op(a.op);
  const std::size_t n = static_cast<std::size_t>(b.size);
  const std::size_t all = a.count * n;
  const bool ip = a.recv == elem_ptr(a.send, static_cast<std::size_t>(b.rank) * a.count, a.dtype);
  MemorySpace& m = t.memory();
  auto work = ip ? nullptr : std::make_shared<Buffer>(m, a.bytes(std::max<std::size_t>(all, 1)));
  void* buf = ip ? const_cast<void*>(a.send) : work->data();
  const AvgAround avg(m, a, b.size);
  return visit_gloo_type(a.dtype, [&](auto tag) -> PreparedCall {
    using T = typename decltype(tag)::type;
    std::shared_ptr<gloo::ReduceScatterHalvingDoubling<T>> algo;
    blocking(b, "making gloo::ReduceScatterHalvingDoubling", [&] {
      algo = std::make_shared<gloo::ReduceScatterHalvingDoubling<T>>(
          b.ctx, std::vector<T*>{static_cast<T*>(buf)}, static_cast<int>(all),
          std::vector<int>(n, static_cast<int>(a.count)), class_reduction<T>(a.op.kind));
    });
    return [b, algo, work, avg, m = &m, buf, send = a.send, recv = a.recv, all, count = a.count,
            bytes = a.bytes(a.count)] {
      avg.in(buf, send, all);  // out of place: the input into the class's buffer (scaled for avg)
      blocking(b, "in gloo::ReduceScatterHalvingDoubling::run (some rank never arrived)", [&] { algo->run(); });
      m->copy(recv, buf, bytes);  // this rank's chunk, left at the buffer's start
      avg.out(recv, count);
    };
  });
}

template <PreparedCall (*Bind)(Transport&, const CollArgs&)>
PreparedCall prepare(Transport& t, const CollArgs& a) {
  return Bind(t, a);
}
template <PreparedCall (*Bind)(Transport&, const CollArgs&)>
void run(Transport& t, const CollArgs& a) {
  Bind(t, a)();
}

PreparedCall bind_allreduce_ring(Transport& t, const CollArgs& a) { return bind_allreduce(t, a, false); }

using Why = std::optional<std::string>;

Why any_count(int, const CollArgs& a) { return pytorch_dtype(a.dtype); }

Why allgather_supports(int, const CollArgs& a) {
  if (auto why = pytorch_dtype(a.dtype)) return why;
  if (a.count == 0)
    return "gloo::allgather divides by the input's size: 0 elements kill the process (SIGFPE; measured)";
  return std::nullopt;
}

Why reduce_scatter_supports(int n, const CollArgs& a) {
  if (a.dtype == DType::bfloat16) return "Gloo has no bfloat16 arithmetic (ReduceScatterHalvingDoubling<T>)";
  if (a.count == 0)
    return "gloo::ReduceScatterHalvingDoubling's constructor takes the first element of an empty vector at 0 elements "
           "(undefined behaviour, UBSan)";
  if (over_int_bytes(a.count * static_cast<std::size_t>(n), a.dtype))
    return "gloo::ReduceScatterHalvingDoubling keeps its byte count in an int: world size x count x element size "
           "must stay below 2^31";
  return std::nullopt;
}

constexpr const char* kPyTorchKey = "pytorch_call";
constexpr const char* kGlooKey = "gloo_call";

template <Op O>
LibraryConfig config(const AlgoEntry&, const CollArgs&) {
  switch (O) {
    case Op::broadcast:
      return {{kPyTorchKey, "dist.broadcast -> ProcessGroupGloo::broadcast (AsyncBroadcastWork)"},
              {kGlooKey, "gloo::broadcast(BroadcastOptions): binomial tree from the root"}};
    case Op::reduce:
      return {{kPyTorchKey, "dist.reduce -> ProcessGroupGloo::reduce (AsyncReduceWork)"},
              {kGlooKey, "gloo::reduce(ReduceOptions): ring reduce-scatter, chunks sent to the root; segments <= 1 MiB"}};
    case Op::allreduce:
      return {{kPyTorchKey, "dist.all_reduce -> ProcessGroupGloo::allreduce (AsyncAllreduceWork)"},
              {kGlooKey, "gloo::allreduce(AllreduceOptions), algorithm unset: ring; segments <= 1 MiB"}};
    case Op::gather:
      return {{kPyTorchKey, "dist.gather -> ProcessGroupGloo::gather (AsyncGatherWork): flat output at the root, copied out"},
              {kGlooKey, "gloo::gather(GatherOptions): every rank sends to the root"}};
    case Op::allgather:
      return {{kPyTorchKey, "dist.all_gather -> ProcessGroupGloo::allgather (AsyncAllgatherWork): flat output, copied out "
                            "(all_gather_into_tensor raises in 1.13)"},
              {kGlooKey, "gloo::allgather(AllgatherOptions): ring"}};
    case Op::scatter:
      return {{kPyTorchKey, "dist.scatter -> ProcessGroupGloo::scatter (AsyncScatterWork)"},
              {kGlooKey, "gloo::scatter(ScatterOptions): the root sends to every rank"}};
    case Op::reduce_scatter:
      return {{kPyTorchKey, "none: ProcessGroupGloo (1.13) raises for reduce_scatter"},
              {kGlooKey, "gloo::ReduceScatterHalvingDoubling (algorithm class, constructed once per case)"}};
    case Op::alltoall:
      return {{kPyTorchKey, "dist.all_to_all_single (no splits) -> ProcessGroupGloo::alltoall_base (AsyncAlltoallWork)"},
              {kGlooKey, "gloo::alltoall(AlltoallOptions): pairwise exchange"}};
  }
  return {};
}

constexpr const char* kReq = "gloo backend, host memory; any world size, any root, any count; no bfloat16 (as PyTorch 1.13)";

COLLBENCH_REGISTER({Op::broadcast, "library", "gloo", "gloo::broadcast(BroadcastOptions), as PyTorch 1.13's dist.broadcast on Gloo",
                    kReq, &run<bind_bcast>, &any_count, nullptr, false, &config<Op::broadcast>, false, &prepare<bind_bcast>});
COLLBENCH_REGISTER({Op::reduce, "library", "gloo", "gloo::reduce(ReduceOptions), as PyTorch 1.13's dist.reduce on Gloo", kReq,
                    &run<bind_reduce>, &any_count, nullptr, false, &config<Op::reduce>, false, &prepare<bind_reduce>});
COLLBENCH_REGISTER({Op::allreduce, "library", "gloo",
                    "gloo::allreduce(AllreduceOptions) (Gloo's ring), as PyTorch 1.13's dist.all_reduce on Gloo", kReq,
                    &run<bind_allreduce_ring>, &any_count, nullptr, false, &config<Op::allreduce>, false,
                    &prepare<bind_allreduce_ring>});
COLLBENCH_REGISTER({Op::gather, "library", "gloo",
                    "gloo::gather into a flat buffer + copy out at the root, as PyTorch 1.13's dist.gather on Gloo (the "
                    "copy is part of its cost)",
                    kReq, &run<bind_gather>, &any_count, nullptr, false, &config<Op::gather>, false, &prepare<bind_gather>});
COLLBENCH_REGISTER({Op::allgather, "library", "gloo",
                    "gloo::allgather into a flat buffer + copy out, as PyTorch 1.13's dist.all_gather on Gloo (the copy "
                    "is part of its cost)",
                    "gloo backend, host memory; any world size; count >= 1 (Gloo's allgather divides by 0 on 0 "
                    "elements); no bfloat16 (as PyTorch 1.13)",
                    &run<bind_allgather>, &allgather_supports, nullptr, false, &config<Op::allgather>, false,
                    &prepare<bind_allgather>});
COLLBENCH_REGISTER({Op::scatter, "library", "gloo", "gloo::scatter(ScatterOptions), as PyTorch 1.13's dist.scatter on Gloo", kReq,
                    &run<bind_scatter>, &any_count, nullptr, false, &config<Op::scatter>, false, &prepare<bind_scatter>});
COLLBENCH_REGISTER({Op::reduce_scatter, "library", "gloo",
                    "gloo::ReduceScatterHalvingDoubling (Gloo's own; PyTorch 1.13's Gloo raises for reduce_scatter); out "
                    "of place through a copy of the input",
                    "gloo backend, host memory; any world size; world size x count x element size < 2^31 bytes; no "
                    "bfloat16",
                    &run<bind_reduce_scatter>, &reduce_scatter_supports, nullptr, /*native_avg=*/true,
                    &config<Op::reduce_scatter>, false, &prepare<bind_reduce_scatter>});
COLLBENCH_REGISTER({Op::alltoall, "library", "gloo",
                    "gloo::alltoall(AlltoallOptions), as PyTorch 1.13's dist.all_to_all_single on Gloo",
                    "gloo backend, host memory; any world size, any count; out of place only; no bfloat16 (as PyTorch 1.13)",
                    &run<bind_alltoall>, &any_count, nullptr, false, &config<Op::alltoall>, false, &prepare<bind_alltoall>});

}  // namespace
}  // namespace gloo_library
}  // namespace collbench
