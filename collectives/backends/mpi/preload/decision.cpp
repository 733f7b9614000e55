#include "collectives/backends/mpi/preload/decision.hpp"

#include <climits>
#include <exception>
#include <set>
#include <utility>

namespace collbench::preload {

Coverage coverage(const Settings& s) {
  Coverage c;
  if (s.threads) {
    c.off = "threads: above MPI_THREAD_FUNNELED";
    c.lines.push_back(
        "MPI_Init_thread gave a thread level above MPI_THREAD_FUNNELED: nothing served (every "
        "collective goes to the library)");
  } else if (s.cuda) {
    c.off = "CUDA: buffers may be device memory";
    c.lines.push_back(
        "the CUDA driver is loaded (buffers may be device memory): nothing served (every collective goes "
        "to the library)");
  } else if (s.tuning_path.empty()) {
    c.off = "no tuning file";
  } else if (!s.error.empty()) {
    c.off = "tuning file unusable";
    c.lines.push_back(std::string(kTuningVar) + "=" + s.tuning_path + ": " + s.error +
                      "; every collective goes to the library");
  } else {
    try {
      c.tuning = Tuning::parse(s.text, s.tuning_path);
      std::set<std::string> unknown;
      for (const Tuning::Named& n : c.tuning->named())
        if (n.backend == "mpi" && n.device == "cpu" && n.algo != "library" &&
            !Registry::get().find(n.op, n.algo, "mpi"))
          unknown.insert(std::string(op_name(n.op)) + " '" + n.algo + "' (" + n.origin + ")");
      if (!unknown.empty()) {
        std::string l = "tuning file names algorithms collbench does not have:";
        for (const std::string& u : unknown) l += " " + u;
        c.lines.push_back(l + "; the library serves those ranges");
      }
    } catch (const std::exception& e) {
      c.off = "tuning file unusable";
      c.lines.push_back(std::string(e.what()) + "; every collective goes to the library");
    }
  }
  return c;
}

Decision::Decision(std::optional<Tuning> tuning, std::string off, int keyval)
    : tuning_(std::move(tuning)), off_(std::move(off)), contexts_(keyval) {}

void Decision::decide(const Call& c, Plan& p, bool timed) {
  if (!off_.empty() && !timed) {  // nothing served, nothing counted: as close to the bare call as can be
    p.why = off_;
    return;
  }
  if (c.comm == MPI_COMM_NULL) {
    p.why = "no communicator";
    return;
  }
  if (!contexts_.find(c.comm, p.ctx)) {
    p.why = "not a communicator";
    return;
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
  if (!p.ctx) p.ctx = contexts_.make(c.comm);
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

}  // namespace collbench::preload
