// The preload library's decisions and its service (docs/preload.md):
//   decide   from what MPI requires to match on every rank (signature.hpp: the count and type
//            signature of the significant side, the op, the root, the communicator) and the
//            tuning file every rank holds the same bytes of: serve with an algorithm, or the
//            library's call, on every rank alike;
//   serve    on the application communicator's Context (its private communicator, transport,
//            scratch and layout, made collectively at the first served call on it, kept as an
//            attribute and freed with the communicator), with the application's buffers, or a
//            copy of them where its datatype is not a plain array of the basic type (made by
//            MPI itself: a send to self with the application's type, received as n x basic);
//   count    per op and "served by", for the summary at MPI_Finalize (COLLBENCH_PMPI_SUMMARY).
// Every MPI call here is PMPI_ or one this library does not define (MPI_Isend, MPI_Comm_dup ...:
// the MPI transport's): a call of an MPI_ collective while serving one would come back here, so
// it is counted (re-entered) and sent to the library, and MPI_Finalize says so on stderr.
#include "collectives/backends/mpi/preload/preload.hpp"

#include <dlfcn.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collectives/backends/mpi/mpi_library.hpp"
#include "collectives/backends/mpi/mpi_transport.hpp"
#include "collectives/backends/mpi/preload/signature.hpp"
#include "collectives/backends/mpi/quiet_comm.hpp"
#include "collectives/core/workspace.hpp"
#include "collectives/registry.hpp"
#include "collectives/formats/tuning.hpp"

namespace collbench::preload {
namespace {

constexpr const char* kTuningVar = "COLLBENCH_TUNING";
constexpr const char* kSummaryVar = "COLLBENCH_PMPI_SUMMARY";
constexpr const char* kSelf = "libcollbench-pmpi";
// The transport's scope: an MPI collective has no timeout, so neither has its service (a
// year); "watched" makes the MPI transport wait in plain blocking MPI calls, as MPI would.
constexpr std::chrono::milliseconds kNoTimeout{365LL * 24 * 3600 * 1000};
constexpr int kStageTag = 0;  // a send to self: no peer's message can match it

#if defined(MPICH_VERSION)
constexpr const char* kBuiltFor = "MPICH";
#else
constexpr const char* kBuiltFor = "Open MPI";
#endif

std::string library_version() {
  // MPICH's MPI_MAX_LIBRARY_VERSION_STRING is 8192, Open MPI's 256: room for either, since this
  // runs before it is known which MPI answers.
  static char buf[16384];
  int len = 0;
  if (PMPI_Get_library_version(buf, &len) != MPI_SUCCESS || len <= 0) return "";
  std::string v(buf, static_cast<std::size_t>(len) < sizeof buf ? static_cast<std::size_t>(len) : 0);
  v = v.substr(0, v.find('\n'));
  while (!v.empty() && (v.back() == '\0' || v.back() == ' ' || v.back() == ','))
    v.pop_back();  // padding some MPIs leave
  return v;
}

int world_rank() {
  int r = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// One line of this library on stderr (rank 0's, for what every rank knows alike).
void say(const std::string& line) {
  std::fprintf(stderr, "%s: %s\n", kSelf, line.c_str());
  std::fflush(stderr);
}

constexpr std::size_t kOps = 8;
std::size_t op_index(Op op) { return static_cast<std::size_t>(op); }

// What the tuning file chose for one (op, size) on one communicator: an algorithm, or the
// library and why.
struct Choice {
  const AlgoEntry* entry = nullptr;
  std::string why;  // entry null: why the library
};

// Everything the preload keeps for one application communicator, made at the first served call
// on it (collective over it, as that call is) and freed with it (the attribute's delete
// callback, or MPI_Finalize's wrapper for WORLD and SELF).
class Context {
 public:
  Context(MPI_Comm app, const std::shared_ptr<CallScope>& scope) {
    // Own traffic on a private communicator, made the quiet way (quiet_comm.hpp: a plain dup
    // would leave Open MPI's libnbc progress hook in every later call).
    int rc = mpi::quiet_dup(app, &comm_);
    if (rc != MPI_SUCCESS) throw Error("cannot duplicate the communicator (MPI error " + std::to_string(rc) + ")");
    transport_ = std::make_unique<MpiTransport>(comm_, scope);
    rank_ = transport_->rank();
    size_ = transport_->size();
    // The node layout: each rank's node labelled by its MPI_COMM_TYPE_SHARED group's lowest rank.
    MPI_Comm local = MPI_COMM_NULL;
    rc = mpi::quiet_split_shared(comm_, rank_, &local);
    if (rc != MPI_SUCCESS) throw Error("cannot split the communicator by node (MPI error " + std::to_string(rc) + ")");
    int label = rank_;
    PMPI_Allreduce(MPI_IN_PLACE, &label, 1, MPI_INT, MPI_MIN, local);
    PMPI_Comm_free(&local);
    std::vector<int> node_of(static_cast<std::size_t>(size_));
    PMPI_Allgather(&label, 1, MPI_INT, node_of.data(), 1, MPI_INT, comm_);
    transport_->set_node_layout(node_of);
    const patterns::NodeLayout& nl = transport_->node_layout();
    for (int k = 0; k < nl.nodes(); ++k) layout_.ranks_per_node.push_back(nl.local_size(k));
    work_ = std::make_unique<Workspace>(transport_->memory());
    stage_ = std::make_unique<Workspace>(transport_->memory());
  }
  ~Context() {
    work_.reset();
    stage_.reset();
    transport_.reset();  // its sub-communicators and peer memory (a collective free) first
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (!finalized) PMPI_Comm_free(&comm_);
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  MpiTransport& transport() { return *transport_; }
  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  const TunedLayout& layout() const { return layout_; }
  Workspace& work() { return *work_; }
  // Scratch for staged buffers: slot 0 the send side, 1 the receive side.
  void* stage(std::size_t bytes, int slot) { return stage_->get(bytes, slot); }

  // The tuning file's choice for (op, bytes) on this communicator, remembered (a program uses
  // few sizes; the memo is dropped when it grows past kChoices).
  template <class Choose>
  const Choice& choice(Op op, std::uint64_t bytes, Choose&& choose) {
    Last& last = last_[op_index(op)];  // a loop of one size: no lookup
    if (last.choice && last.bytes == bytes) return *last.choice;
    auto& memo = choices_[op_index(op)];
    auto it = memo.find(bytes);
    if (it == memo.end()) {
      if (memo.size() >= kChoices) memo.clear();
      it = memo.emplace(bytes, choose()).first;
    }
    last = {bytes, &it->second};
    return it->second;
  }
  // Algorithms that refused this communicator (NotSupported at their start, on every rank).
  const std::string* refused(const AlgoEntry* e) const {
    auto it = refused_.find(e);
    return it == refused_.end() ? nullptr : &it->second;
  }
  void refuse(const AlgoEntry* e, std::string why) { refused_.emplace(e, std::move(why)); }

 private:
  static constexpr std::size_t kChoices = 1024;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::unique_ptr<MpiTransport> transport_;
  int rank_ = 0, size_ = 1;
  TunedLayout layout_;
  std::unique_ptr<Workspace> work_, stage_;
  std::unordered_map<std::uint64_t, Choice> choices_[kOps];
  struct Last {
    std::uint64_t bytes = 0;
    const Choice* choice = nullptr;
  };
  Last last_[kOps];  // the latest choice per op (unordered_map nodes stay put until cleared)
  std::map<const AlgoEntry*, std::string> refused_;
};

// One row of the summary: calls of one op served one way.
struct Row {
  std::string by;   // the algorithm, or "library"
  std::string why;  // library: why ("" when the tuning file chose it)
  std::uint64_t calls = 0, bytes = 0;
  double seconds = 0;
};

}  // namespace

class Preload {
 public:
  Preload(std::optional<Tuning> tuning, std::string off, std::string summary, int keyval)
      : tuning_(std::move(tuning)),
        off_(std::move(off)),
        summary_(std::move(summary)),
        keyval_(keyval),
        scope_(std::make_shared<CallScope>(kNoTimeout)) {
    scope_->set_watched(true);
  }

  int serve(const Call& c, LibraryCall library);
  void stop();
  // A context is being freed (its communicator's delete callback): not the remembered one now.
  void forget(const Context* ctx) {
    if (ctx == last_ctx_) remember(MPI_COMM_NULL, nullptr);
  }

 private:
  struct Plan;
  void decide(const Call& c, Plan& p, bool timed);
  int run(const Call& c, Plan& p);
  void record(Op op, std::string_view by, std::string_view why, std::uint64_t bytes, double seconds);
  void print_summary();

  std::optional<Tuning> tuning_;
  std::string off_;      // non-empty: nothing is served, and why (threads, tuning file)
  std::string summary_;  // "": none; "stderr"; else a file path (rank 0's COLLBENCH_PMPI_SUMMARY)
  int keyval_;
  std::shared_ptr<CallScope> scope_;
  Signatures signatures_;
  void remember(MPI_Comm comm, Context* ctx) {
    last_comm_ = comm;
    last_ctx_ = ctx;
  }
  // The latest communicator with a context, and it: set when one is found or made, cleared when
  // it is freed, so a handle MPI reuses for a new communicator is never taken for the old one.
  MPI_Comm last_comm_ = MPI_COMM_NULL;
  Context* last_ctx_ = nullptr;
  bool busy_ = false;  // serving a call: an MPI_ collective now is a re-entry
  std::uint64_t reentered_ = 0;
  std::vector<Row> rows_[kOps];
};

namespace {
Preload* g_preload = nullptr;  // the process's Preload (preload.hpp says why it is global)

// The attribute's delete callback: the communicator is being freed (or MPI_Finalize's wrapper
// deletes WORLD's and SELF's).
int delete_context(MPI_Comm, int, void* attr, void*) {
  auto* ctx = static_cast<Context*>(attr);
  if (g_preload) g_preload->forget(ctx);
  delete ctx;
  return MPI_SUCCESS;
}
}  // namespace

Preload* instance() { return g_preload; }

// ---- deciding ---------------------------------------------------------------------------

struct Preload::Plan {
  Context* ctx = nullptr;
  const AlgoEntry* entry = nullptr;  // null: the library's call
  std::string_view why;              // the library: why (a literal, or text the Preload or context keeps)
  std::uint64_t bytes = 0;           // the call's size as tuning files count it (nccl-tests' size)
  Signature sig;                     // of the deciding side (per chunk)
  DType dtype = DType::uint8;        // what the algorithm moves: the basic type, or its bytes
  std::size_t count = 0;             // elements of dtype per chunk
  int rank = 0, size = 1;
};

void Preload::decide(const Call& c, Plan& p, bool timed) {
  if (!off_.empty() && !timed) {  // nothing served, nothing counted: as close to the bare call as can be
    p.why = off_;
    return;
  }
  if (c.comm == MPI_COMM_NULL) {
    p.why = "no communicator";
    return;
  }
  if (c.comm == last_comm_) {  // the communicator of the previous served call: no attribute lookup
    p.ctx = last_ctx_;
  } else {
    void* attr = nullptr;
    int cached = 0;
    if (PMPI_Comm_get_attr(c.comm, keyval_, &attr, &cached) != MPI_SUCCESS) {
      p.why = "not a communicator";
      return;
    }
    p.ctx = cached ? static_cast<Context*>(attr) : nullptr;
    if (p.ctx) remember(c.comm, p.ctx);
  }
  int inter = 0;
  if (p.ctx) {
    p.rank = p.ctx->rank();
    p.size = p.ctx->size();
  } else {
    PMPI_Comm_test_inter(c.comm, &inter);
    PMPI_Comm_rank(c.comm, &p.rank);
    PMPI_Comm_size(c.comm, &p.size);
  }
  // The side significant on this rank, whose signature MPI requires equal on every rank:
  // gather's send side except at the root (its receive side), scatter's receive side except at
  // the root (its send side), every other op's receive side (its in-place form included).
  const bool root = p.rank == c.root;
  const bool send_side = (c.op == Op::gather && !root) || (c.op == Op::scatter && root);
  p.sig = send_side ? signatures_.of(c.stype, c.scount) : signatures_.of(c.rtype, c.rcount);
  const std::size_t chunks = extent_chunks(op_traits(c.op).size_chunks, p.size);
  p.bytes = p.sig.bytes * chunks;
  if (!off_.empty()) {
    p.why = off_;
    return;
  }
  if (inter) {
    p.why = "an inter-communicator";
    return;
  }
  if (op_has_root(c.op) && (c.root < 0 || c.root >= p.size)) {
    p.why = "root outside the communicator";
    return;
  }
  if (!p.sig.homogeneous) {
    p.why = p.sig.why;
    return;
  }
  if (p.sig.n * chunks > static_cast<std::size_t>(INT_MAX)) {
    p.why = "over 2^31 elements";
    return;
  }
  if (op_reduces(c.op)) {
    const std::optional<RedOp> red = reduction(c.mpi_op);
    if (!red) {
      p.why = "op: user-defined or not sum/prod/max/min";
      return;
    }
    const std::optional<DType> dtype = reduced_as(p.sig.leaf);
    if (!dtype) {
      p.why = "datatype: no collbench type for this reduction";
      return;
    }
    p.dtype = *dtype;
    p.count = p.sig.n;
  } else {
    p.dtype = DType::uint8;  // moved as bytes, whatever the basic type
    p.count = p.sig.n * p.sig.leaf_bytes;
  }
  if (!tuning_) {
    p.why = "no tuning file";
    return;
  }
  // Served if the file says so: the communicator's context now (collective, as this call is).
  if (!p.ctx) {
    p.ctx = new Context(c.comm, scope_);
    PMPI_Comm_set_attr(c.comm, keyval_, p.ctx);
    remember(c.comm, p.ctx);
  }
  const Choice& choice = p.ctx->choice(c.op, p.bytes, [&] {
    const TunedChoice t = tuning_->choose(c.op, "mpi", "cpu", p.ctx->layout(), p.bytes);
    if (t.algo == "library") return Choice{nullptr, ""};
    const AlgoEntry* e = Registry::get().find(c.op, t.algo, "mpi");
    if (!e)
      return Choice{nullptr, "tuning file names '" + t.algo + "', not a " + std::string(op_name(c.op)) + " algorithm"};
    if (e->library()) return Choice{nullptr, "tuning file names '" + t.algo + "', the library's own"};
    if (e->supports) {
      CollArgs a;  // what every rank knows alike: no buffers
      a.count = p.count;
      a.dtype = p.dtype;
      a.root = c.root;
      if (op_reduces(c.op)) a.op = make_reduce_op(*reduction(c.mpi_op), p.dtype);
      if (auto why = e->supports(p.size, a)) return Choice{nullptr, t.algo + " cannot: " + *why};
    }
    return Choice{e, ""};
  });
  if (!choice.entry) {
    p.why = choice.why;
    return;
  }
  if (const std::string* why = p.ctx->refused(choice.entry)) {
    p.why = *why;
    return;
  }
  p.entry = choice.entry;
}

// ---- serving ----------------------------------------------------------------------------

namespace {

// Copies `fcount` x `ftype` at `from` to `tcount` x `ttype` at `to` (equal signatures) through
// MPI itself: a send to self on the private communicator. How a derived datatype's buffer
// becomes n x basic (and back) without reading its type map here.
void restage(Context& ctx, const void* from, int fcount, MPI_Datatype ftype, void* to, int tcount, MPI_Datatype ttype) {
  const int rc = PMPI_Sendrecv(from, fcount, ftype, ctx.rank(), kStageTag, to, tcount, ttype, ctx.rank(), kStageTag,
                               ctx.comm(), MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS)
    throw Error("staging a derived datatype through MPI failed (MPI error " + std::to_string(rc) + ")");
}

// A buffer as the algorithm sees it: the application's, or a staged copy of it as n x basic.
class Side {
 public:
  // `count` x `type` at `buf` (significant), `n` elements of the signature's basic type.
  Side(Context& ctx, const void* buf, int count, MPI_Datatype type, std::size_t n, const Signature& deciding, int slot)
      : ctx_(ctx), buf_(const_cast<void*>(buf)), count_(count), type_(type), n_(n), leaf_(deciding.leaf) {
    // The deciding basic type itself (the common case: no walk), or a handle whose own signature
    // says it is that basic type; anything else is staged.
    direct_ = type == leaf_;
    if (!direct_) {
      const Signature mine = signature(type, count);
      direct_ = mine.direct && mine.leaf == leaf_;
    }
    ptr_ = direct_ ? buf_ : ctx.stage(n * deciding.leaf_bytes, slot);
  }
  // A side this rank does not use (a non-root's receive buffer): scratch of `bytes`.
  Side(Context& ctx, std::size_t bytes, int slot) : ctx_(ctx), ptr_(ctx.stage(bytes, slot)) {}

  std::byte* ptr() const { return static_cast<std::byte*>(ptr_); }
  bool direct() const { return direct_; }
  // The application's data into the stage, and back (nothing when direct).
  void load() const {
    if (!direct_ && buf_) restage(ctx_, buf_, count_, type_, ptr_, static_cast<int>(n_), leaf_);
  }
  void store() const {
    if (!direct_ && buf_) restage(ctx_, ptr_, static_cast<int>(n_), leaf_, buf_, count_, type_);
  }

 private:
  Context& ctx_;
  void* buf_ = nullptr;
  int count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  std::size_t n_ = 0;
  MPI_Datatype leaf_ = MPI_DATATYPE_NULL;
  bool direct_ = true;
  void* ptr_ = nullptr;
};

// Where block `i` of `count` x `type` starts in `buf` (MPI's in-place blocks: i*count*extent).
void* block(void* buf, int i, int count, MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  return static_cast<std::byte*>(buf) + static_cast<MPI_Aint>(i) * count * extent;
}

}  // namespace

// Runs the chosen algorithm on the call's buffers (staged where their type asks). NotSupported
// from the algorithm's start (the same on every rank: it depends on the layout and the size)
// returns -1: the caller makes the library's call instead.
int Preload::run(const Call& c, Plan& p) {
  Context& ctx = *p.ctx;
  const int n = p.size, r = p.rank;
  const std::size_t chunk = p.count * dtype_size(p.dtype);  // bytes per rank-chunk
  const std::size_t elems = p.sig.n;                        // basic elements per rank-chunk
  const bool root = r == c.root;
  CollArgs a;
  a.count = p.count;
  a.dtype = p.dtype;
  a.root = c.root;
  a.workspace = &ctx.work();
  if (op_reduces(c.op)) a.op = make_reduce_op(*reduction(c.mpi_op), p.dtype);
  const bool in_place_send = c.sbuf == MPI_IN_PLACE;
  const auto nn = static_cast<std::size_t>(n);
  std::optional<Side> out;       // written back after the algorithm
  bool staged_in_place = false;  // reduce_scatter in place, its input staged
  // This rank's input as the algorithm reads it (stage slot 0), loaded now.
  auto input = [&](const void* buf, int count, MPI_Datatype type, std::size_t basic) {
    Side s(ctx, buf, count, type, basic, p.sig, 0);
    s.load();
    return s;
  };
  // A buffer the algorithm writes (slot 1), stored back into the application's after it.
  auto output = [&](void* buf, int count, MPI_Datatype type, std::size_t basic) {
    out.emplace(ctx, buf, count, type, basic, p.sig, 1);
    return out->ptr();
  };
  switch (c.op) {
    case Op::broadcast:
      if (root)
        a.send = a.recv = input(c.rbuf, c.rcount, c.rtype, elems).ptr();
      else
        a.send = a.recv = output(c.rbuf, c.rcount, c.rtype, elems);
      break;
    case Op::allreduce:
    case Op::reduce:
      if (c.op == Op::reduce && !root) {  // the receive buffer is not significant here
        a.send = input(c.sbuf, c.scount, c.stype, elems).ptr();
        a.recv = Side(ctx, chunk, 1).ptr();
        break;
      }
      a.recv = output(c.rbuf, c.rcount, c.rtype, elems);
      if (in_place_send) out->load();
      a.send = in_place_send ? a.recv : input(c.sbuf, c.scount, c.stype, elems).ptr();
      break;
    case Op::allgather:
    case Op::gather: {
      if (c.op == Op::gather && !root) {
        a.send = input(c.sbuf, c.scount, c.stype, elems).ptr();
        a.recv = Side(ctx, chunk * nn, 1).ptr();
        break;
      }
      std::byte* all = output(c.rbuf, c.rcount * n, c.rtype, elems * nn);
      std::byte* mine = all + static_cast<std::size_t>(r) * chunk;
      // In place, only this rank's block of the receive buffer is input.
      if (in_place_send && !out->direct())
        restage(ctx, block(c.rbuf, r, c.rcount, c.rtype), c.rcount, c.rtype, mine, static_cast<int>(elems), p.sig.leaf);
      a.send = in_place_send ? mine : input(c.sbuf, c.scount, c.stype, elems).ptr();
      a.recv = all;
      break;
    }
    case Op::scatter: {
      if (!root) {
        a.send = Side(ctx, chunk * nn, 0).ptr();
        a.recv = output(c.rbuf, c.rcount, c.rtype, elems);
        break;
      }
      std::byte* all = input(c.sbuf, c.scount * n, c.stype, elems * nn).ptr();
      a.send = all;
      // In place, the root's block stays where it is in the send buffer.
      a.recv =
          c.rbuf == MPI_IN_PLACE ? all + static_cast<std::size_t>(r) * chunk : output(c.rbuf, c.rcount, c.rtype, elems);
      break;
    }
    case Op::reduce_scatter: {
      // MPI's in-place form: the input is the whole receive buffer, the result lands at its
      // start; collbench's (NCCL's): the result at this rank's block of the input.
      const Side s = input(in_place_send ? c.rbuf : c.sbuf, c.rcount * n, c.rtype, elems * nn);
      staged_in_place = !s.direct();
      a.send = s.ptr();
      a.recv = in_place_send ? s.ptr() + static_cast<std::size_t>(r) * chunk : output(c.rbuf, c.rcount, c.rtype, elems);
      break;
    }
    case Op::alltoall:
      a.recv = output(c.rbuf, c.rcount * n, c.rtype, elems * nn);
      if (in_place_send) out->load();
      a.send = in_place_send ? a.recv : input(c.sbuf, c.scount * n, c.stype, elems * nn).ptr();
      break;
  }
  try {
    run_entry(*p.entry, ctx.transport(), a);
  } catch (const NotSupported& e) {
    ctx.refuse(p.entry, p.entry->algo + " cannot: " + e.what());
    p.why = *ctx.refused(p.entry);
    p.entry = nullptr;
    return -1;
  }
  if (c.op == Op::reduce_scatter && in_place_send) {
    // The result from this rank's block of the (staged) input to the start of the buffer.
    if (staged_in_place)
      restage(ctx, a.recv, static_cast<int>(elems), p.sig.leaf, c.rbuf, c.rcount, c.rtype);
    else if (r != 0)
      std::memmove(c.rbuf, a.recv, chunk);
  }
  if (out) out->store();
  return MPI_SUCCESS;
}

int Preload::serve(const Call& c, LibraryCall library) {
  using Clock = std::chrono::steady_clock;
  const bool timed = !summary_.empty();
  const Clock::time_point t0 = timed ? Clock::now() : Clock::time_point{};
  Plan p;
  int rc = MPI_SUCCESS;
  if (busy_) {
    ++reentered_;
    p.why = "re-entered (a collbench bug)";
    rc = library();
  } else {
    busy_ = true;
    try {
      decide(c, p, timed);
      if (!p.entry || run(c, p) < 0) rc = library();
    } catch (const std::exception& e) {
      // A failure inside an algorithm: the ranks are mid-collective, so no library call can stand
      // in for it. Say where, and end the job as MPI's default error handler would.
      std::fprintf(stderr, "%s: rank %d: %s with %s failed: %s\n", kSelf, world_rank(),
                   std::string(mpi_library::call_name(c.op)).c_str(), p.entry ? p.entry->algo.c_str() : "(deciding)",
                   e.what());
      std::fflush(stderr);
      PMPI_Abort(c.comm == MPI_COMM_NULL ? MPI_COMM_WORLD : c.comm, 1);
    }
    busy_ = false;
  }
  if (timed) {
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    record(c.op, p.entry ? std::string_view(p.entry->algo) : std::string_view("library"), p.why, p.bytes, s);
  }
  return rc;
}

void Preload::record(Op op, std::string_view by, std::string_view why, std::uint64_t bytes, double seconds) {
  for (Row& row : rows_[op_index(op)])
    if (row.by == by && row.why == why) {
      ++row.calls;
      row.bytes += bytes;
      row.seconds += seconds;
      return;
    }
  rows_[op_index(op)].push_back({std::string(by), std::string(why), 1, bytes, seconds});
}

int serve(Preload& p, const Call& c, LibraryCall library) { return p.serve(c, library); }

// ---- start and stop ---------------------------------------------------------------------

bool right_mpi() {
  const std::string v = library_version();
  if (v.rfind(kBuiltFor, 0) == 0) return true;
  const std::string runs =
      std::string("built for ") + kBuiltFor + ", but this process runs " + (v.empty() ? "an unknown MPI" : v);
  if constexpr (sizeof(MPI_Comm) < sizeof(void*)) {
    // Built with 32-bit integer handles (MPICH), passing another MPI's pointer handles through
    // would cut them: end here, saying so, before any call is made with one.
    say(runs +
        ": its handles cannot pass through this build; exiting (preload the libcollbench-pmpi.so built "
        "against the MPI the program links: docs/preload.md)");
    std::_Exit(1);
  }
  // Built with pointer-sized handles (Open MPI): another MPI's integer handles pass through intact.
  say(runs + ": nothing served (every call goes to the library as it is)");
  return false;
}

namespace {

// What rank 0 broadcasts at MPI_Init: its COLLBENCH_TUNING and COLLBENCH_PMPI_SUMMARY, and the
// tuning file's bytes or why it could not be read.
struct Settings {
  std::string tuning_path, summary, text, error;
};

std::string pack(const Settings& s) {
  std::string out;
  for (const std::string* f : {&s.tuning_path, &s.summary, &s.text, &s.error}) {
    const std::uint64_t len = f->size();
    out.append(reinterpret_cast<const char*>(&len), sizeof len);
    out += *f;
  }
  return out;
}

Settings unpack(const std::string& in) {
  Settings s;
  std::size_t at = 0;
  for (std::string* f : {&s.tuning_path, &s.summary, &s.text, &s.error}) {
    std::uint64_t len = 0;
    std::memcpy(&len, in.data() + at, sizeof len);
    at += sizeof len;
    *f = in.substr(at, len);
    at += len;
  }
  return s;
}

Settings rank0_settings() {
  Settings s;
  if (const char* v = std::getenv(kSummaryVar); v && *v && std::strcmp(v, "0") != 0)
    s.summary = std::strcmp(v, "1") == 0 ? "stderr" : v;
  const char* path = std::getenv(kTuningVar);
  if (!path || !*path) return s;
  s.tuning_path = path;
  try {
    s.text = read_tuning_file(path);
  } catch (const std::exception& e) {
    s.error = e.what();  // "--tuning PATH: cannot read (...)": the variable's line says the path
    if (const std::string flag = "--tuning " + s.tuning_path + ": "; s.error.rfind(flag, 0) == 0)
      s.error.erase(0, flag.size());
  }
  return s;
}

}  // namespace

void start(int provided) {
  int rank = world_rank();
  // Rank 0's settings and file, so every rank decides from the same bytes.
  std::string bytes = rank == 0 ? pack(rank0_settings()) : std::string();
  std::uint64_t len = bytes.size();
  PMPI_Bcast(&len, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  bytes.resize(len);
  PMPI_Bcast(bytes.data(), static_cast<int>(len), MPI_BYTE, 0, MPI_COMM_WORLD);
  const Settings s = unpack(bytes);
  // Agreed over the world (one rank alone cannot fall back): the thread level, where above
  // FUNNELED another thread may call MPI while one call is served; and whether the CUDA driver
  // is loaded, where a buffer may be device memory, which this library's algorithms (host
  // loads and stores) must never touch and cannot tell from host memory without it.
  int refuse[2] = {provided > MPI_THREAD_FUNNELED ? 1 : 0, dlsym(RTLD_DEFAULT, "cuInit") ? 1 : 0};
  PMPI_Allreduce(MPI_IN_PLACE, refuse, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const bool threads = refuse[0] != 0, cuda = refuse[1] != 0;

  std::string off;
  std::optional<Tuning> tuning;
  std::vector<std::string> lines;  // rank 0 says them
  if (threads) {
    off = "threads: above MPI_THREAD_FUNNELED";
    lines.push_back(
        "MPI_Init_thread gave a thread level above MPI_THREAD_FUNNELED: nothing served (every "
        "collective goes to the library)");
  } else if (cuda) {
    off = "CUDA: buffers may be device memory";
    lines.push_back(
        "the CUDA driver is loaded (buffers may be device memory): nothing served (every collective goes "
        "to the library)");
  } else if (s.tuning_path.empty()) {
    off = "no tuning file";
  } else if (!s.error.empty()) {
    off = "tuning file unusable";
    lines.push_back(std::string(kTuningVar) + "=" + s.tuning_path + ": " + s.error +
                    "; every collective goes to the library");
  } else {
    try {
      tuning = Tuning::parse(s.text, s.tuning_path);
      std::set<std::string> unknown;
      for (const Tuning::Named& n : tuning->named())
        if (n.backend == "mpi" && n.device == "cpu" && n.algo != "library" &&
            !Registry::get().find(n.op, n.algo, "mpi"))
          unknown.insert(std::string(op_name(n.op)) + " '" + n.algo + "' (" + n.origin + ")");
      if (!unknown.empty()) {
        std::string l = "tuning file names algorithms collbench does not have:";
        for (const std::string& u : unknown) l += " " + u;
        lines.push_back(l + "; the library serves those ranges");
      }
    } catch (const std::exception& e) {
      off = "tuning file unusable";
      lines.push_back(std::string(e.what()) + "; every collective goes to the library");
    }
  }
  if (rank == 0)
    for (const std::string& l : lines) say(l);
  int keyval = MPI_KEYVAL_INVALID;
  // Copy: nothing (a duplicate makes its own context at its first served call); delete: free it.
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_context, &keyval, nullptr);
  g_preload = new Preload(std::move(tuning), std::move(off), s.summary, keyval);
}

void Preload::stop() {
  if (!summary_.empty()) print_summary();
  if (reentered_ > 0)
    say("rank " + std::to_string(world_rank()) + ": error: " + std::to_string(reentered_) +
        " MPI collective call(s) reached this library while it served one (sent to the library; a collbench bug)");
  // WORLD's and SELF's contexts (a collective free for WORLD: every rank is here).
  for (MPI_Comm c : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
    void* attr = nullptr;
    int made = 0;  // deleting an attribute never set is an error in Open MPI
    if (PMPI_Comm_get_attr(c, keyval_, &attr, &made) == MPI_SUCCESS && made) PMPI_Comm_delete_attr(c, keyval_);
  }
  PMPI_Comm_free_keyval(&keyval_);
}

void stop() {
  if (!g_preload) return;
  g_preload->stop();
  delete g_preload;
  g_preload = nullptr;
}

// Rank 0 prints every rank's rows, summed: calls, bytes and seconds over ranks.
void Preload::print_summary() {
  std::ostringstream mine;
  for (std::size_t o = 0; o < kOps; ++o)
    for (const Row& row : rows_[o])
      mine << o << '\t' << row.by << '\t' << row.why << '\t' << row.calls << '\t' << row.bytes << '\t' << row.seconds
           << '\n';
  const std::string text = mine.str();
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  int len = static_cast<int>(text.size());
  std::vector<int> lens(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int k = 0; k < size; ++k) {
    displs[static_cast<std::size_t>(k)] = total;
    total += lens[static_cast<std::size_t>(k)];
  }
  std::string all(rank == 0 ? static_cast<std::size_t>(total) : 0, '\0');
  PMPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  std::map<std::tuple<std::size_t, std::string, std::string>, Row> sum;
  std::istringstream in(all);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string op, by, why, calls, bytes, seconds;
    std::getline(f, op, '\t');
    std::getline(f, by, '\t');
    std::getline(f, why, '\t');
    std::getline(f, calls, '\t');
    std::getline(f, bytes, '\t');
    std::getline(f, seconds, '\t');
    Row& row = sum[{std::stoul(op), by, why}];
    row.by = by;
    row.why = why;
    row.calls += std::stoull(calls);
    row.bytes += std::stoull(bytes);
    row.seconds += std::stod(seconds);
  }
  std::FILE* outf = summary_ == "stderr" ? stderr : std::fopen(summary_.c_str(), "w");
  if (!outf) {
    say(std::string(kSummaryVar) + "=" + summary_ + ": cannot write (" + std::strerror(errno) + ")");
    return;
  }
  std::fprintf(outf, "# %s summary: %d rank(s), calls/bytes/seconds summed over ranks; tuning file: %s\n", kSelf, size,
               tuning_ ? tuning_->path().c_str() : "none");
  std::fprintf(outf, "# %-24s %-20s %10s %16s %12s  %s\n", "call", "served by", "calls", "bytes", "seconds",
               "why the library");
  for (const auto& [key, row] : sum)
    std::fprintf(outf, "  %-24s %-20s %10llu %16llu %12.6f  %s\n",
                 std::string(mpi_library::call_name(static_cast<Op>(std::get<0>(key)))).c_str(), row.by.c_str(),
                 static_cast<unsigned long long>(row.calls), static_cast<unsigned long long>(row.bytes), row.seconds,
                 row.why.empty() && row.by == "library" ? "tuning file" : row.why.c_str());
  if (outf != stderr) std::fclose(outf);
  std::fflush(stderr);
}

}  // namespace collbench::preload
