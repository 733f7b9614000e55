// Every algorithm usable on backend "gloo", verified over the Gloo transport (real TCP sockets
// between threads of this process, gloo_threads.hpp) at world sizes 1-5: collbench's own
// algorithms (backend "any") and the Gloo library's entries (gloo_library.cpp: "library", the
// calls PyTorch 1.13's ProcessGroupGloo makes; gloo_variants.cpp: "library:ALGO"). Each rank
// checks its own result exactly; every refusal must be one listed in expected_refusal(), with
// its reason, and every listed one must happen (a case that runs where a refusal is listed fails).
//
// The case space, cut to fit the unit budget (the whole test_gloo binary in <= 25 s on the
// project's 2-core VM: 13-16 s measured idle, 24 s beside another job; the algorithm list and
// the world sizes are not cut). Every entry, in and out of place: counts {0, 1, n-1, 1000, 7n+3}
// in float32 sum at root 0; at count 7n+3 and root n-1, the library entries in float32, int32,
// float64 and float16 sum and float32 and float16 max, the custom ones (whose dtype and redop
// arithmetic the thread suite checks on every case, test_algorithms.cpp) in float16 max. The
// library entries run through their bound call (prepare), the counts twice on one binding as the
// harness reuses it. Plus prod, min and avg for every reducing library entry at count 7n+3.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include "collectives/backends/thread/thread_transport.hpp"
#include "collectives/registry.hpp"
#include "common/cases.hpp"
#include "gloo_threads.hpp"

namespace collbench {
namespace {

using testing::run_gloo_ranks;

bool is(const AlgoEntry& e, Op op, std::string_view algo) { return e.op == op && e.algo == algo; }

// The refusals expected on the Gloo transport, and a phrase of each reason (nullopt: it must run).
std::optional<std::string> expected_refusal(const AlgoEntry& e, const verify::Case& c) {
  const int n = c.world;
  // Zero-copy algorithms: GlooTransport has no peer memory (at 1 rank they copy locally first).
  if (e.traits.peer_memory && n > 1)
    return "needs every rank on one node (peer memory";
  if (!e.library()) return std::nullopt;
  if (c.dtype == DType::bfloat16 && e.algo == "library" && e.op != Op::reduce_scatter)
    return "no bfloat16";  // not in this case space; listed for completeness
  if (is(e, Op::allgather, "library") && c.count == 0) return "divides by the input's size";
  if (is(e, Op::alltoall, "library") && c.in_place && c.count > 0) return "in place refused";
  if (is(e, Op::allreduce, "library:bcube") && (n == 3 || n == 5)) return "unless the world size is a power of two";
  if (is(e, Op::allreduce, "library:bcube") && n == 4) return "called back to back returns wrong sums at 4+ ranks";
  if (is(e, Op::allgather, "library:ring") && n == 1) return "needs a left and a right neighbour";
  if (is(e, Op::allgather, "library:ring") && c.count == 0) return "copies from a null pointer";
  if (is(e, Op::reduce_scatter, "library") && c.count == 0) return "first element of an empty vector";
  return std::nullopt;
}

// Every algorithm of `op` on backend "gloo": custom ones, "library", the "library:" variants.
std::vector<const AlgoEntry*> gloo_entries(Op op) { return Registry::get().for_op(op, "gloo"); }

// One (count, dtype, redop, root, placement) of an entry's cases; the rank is the runner's.
struct Spec {
  std::size_t count;
  DType dtype;
  RedOp redop;
  int root;
  bool in_place;
};

struct Plan {
  const AlgoEntry* entry;
  std::vector<Spec> specs;
  int prepared_calls;  // > 0: through the entry's bound call, this many times on one binding
};

// counts x dtypes x redops x {out of place, in place} at `root` (non-reducing ops: one redop).
std::vector<Spec> specs(Op op, std::vector<std::size_t> counts, std::vector<DType> dtypes, std::vector<RedOp> redops,
                        int root) {
  if (!op_reduces(op)) redops = {RedOp::sum};
  if (!op_has_root(op)) root = 0;
  std::vector<Spec> out;
  for (std::size_t c : counts)
    for (DType t : dtypes)
      for (RedOp r : redops)
        for (bool ip : {false, true}) out.push_back({c, t, r, root, ip});
  return out;
}

// Runs every plan's cases on `n` Gloo ranks; one line per failing (entry, case, rank).
std::vector<std::string> run_plans(const std::vector<Plan>& plans, int n) {
  std::vector<std::string> failures;
  std::mutex mu;
  const auto fail = [&](const AlgoEntry& e, const verify::Case& c, const std::string& what) {
    std::lock_guard lk(mu);
    failures.push_back(e.algo + " " + testing::describe(c) + " rank " + std::to_string(c.rank) + ": " + what);
  };
  try {
    run_gloo_ranks(n, [&](GlooTransport& t) {
      for (const Plan& p : plans) {
        const AlgoEntry& e = *p.entry;
        for (const Spec& s : p.specs) {
          const verify::Case c{e.op, s.dtype, s.redop, s.count, s.root, t.rank(), n, s.in_place};
          t.scope().set_call({std::string(op_name(e.op)), e.algo, c.count * dtype_size(c.dtype), -1, "test"});
          const int calls = e.prepare && runs_as_is(e, CollArgs{.op = make_reduce_op(c.redop, c.dtype)}) ? p.prepared_calls : 0;
          verify::Outcome o;
          try {
            o = verify::run_checked(t, e, c, 0, nullptr, nullptr, calls);
          } catch (const std::exception& ex) {
            fail(e, c, std::string("threw ") + ex.what());
            throw;  // the ranks are out of step now: end this world
          }
          const auto want = expected_refusal(e, c);
          if (o.skipped && !want) fail(e, c, "refused (no refusal expected): " + o.skip_reason);
          else if (o.skipped && o.skip_reason.find(*want) == std::string::npos)
            fail(e, c, "refused for another reason than '" + *want + "': " + o.skip_reason);
          else if (!o.skipped && want) fail(e, c, "ran where a refusal is expected ('" + *want + "')");
          else if (o.check.wrong)
            fail(e, c, std::to_string(o.check.wrong) + " wrong, first at " + std::to_string(o.check.first_index) +
                           " expected " + std::to_string(o.check.expected) + " got " + std::to_string(o.check.got));
        }
      }
      t.barrier();  // every rank's library contexts are connected before any is torn down
    });
  } catch (const std::exception& ex) {
    std::lock_guard lk(mu);
    failures.push_back(std::string("the world of ") + std::to_string(n) + " ranks ended: " + ex.what());
  }
  return failures;
}

void expect_no_failures(const std::vector<std::string>& failures) {
  for (std::size_t i = 0; i < failures.size() && i < 20; ++i) ADD_FAILURE() << failures[i];
  EXPECT_TRUE(failures.empty()) << failures.size() << " failing (entry, case, rank)";
}

// Counts {0, 1, n-1, 1000, 7n+3}: n-1 leaves some ranks' chunks empty, 7n+3 splits unevenly.
std::vector<std::size_t> counts(int n) {
  std::vector<std::size_t> c = testing::small_counts(n);
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}
std::size_t uneven(int n) { return static_cast<std::size_t>(7 * n + 3); }

class GlooAlgorithms : public ::testing::TestWithParam<std::tuple<Op, int>> {};

// Every entry of the op, in and out of place: every count in float32 sum at root 0; at root
// n-1, the dtypes and redops at count 7n+3: for the library entries float32, int32, float64 and
// float16 in sum, float32 and float16 in max, through their bound call (the counts twice on one
// binding, as the harness reuses it); for the custom ones (whose arithmetic the thread suite
// checks on every dtype and redop) float16 max.
TEST_P(GlooAlgorithms, VerifiedOrRefusedAsExpected) {
  const auto [op, n] = GetParam();
  const int last = n - 1;
  std::vector<Plan> plans;
  for (const AlgoEntry* e : gloo_entries(op)) {
    const bool lib = e->library();
    plans.push_back({e, specs(op, counts(n), {DType::float32}, {RedOp::sum}, 0), lib ? 2 : 0});
    if (!lib) {
      plans.push_back({e, specs(op, {uneven(n)}, {DType::float16}, {RedOp::max}, last), 0});
      continue;
    }
    plans.push_back({e, specs(op, {uneven(n)}, {DType::float32, DType::int32, DType::float64, DType::float16}, {RedOp::sum}, last), 1});
    if (op_reduces(op)) plans.push_back({e, specs(op, {uneven(n)}, {DType::float32, DType::float16}, {RedOp::max}, last), 1});
  }
  expect_no_failures(run_plans(plans, n));
}

// prod, min and avg for every reducing library entry, at count 7n+3: out of place in float32,
// int32 and float16; avg also in place (float32, int32: the native-avg entries scale in the
// output there), twice on one binding. avg goes through run_entry's wrapper, or for the
// native-avg entries (the algorithm classes) through their own AvgAround.
class GlooReducingLibrary : public GlooAlgorithms {};

TEST_P(GlooReducingLibrary, ProdMinAvg) {
  const auto [op, n] = GetParam();
  std::vector<Plan> plans;
  for (const AlgoEntry* e : gloo_entries(op)) {
    if (!e->library()) continue;
    std::vector<Spec> s;
    for (DType t : {DType::float32, DType::int32, DType::float16})
      for (RedOp r : {RedOp::prod, RedOp::min, RedOp::avg}) s.push_back({uneven(n), t, r, 0, false});
    plans.push_back({e, s, 1});
    plans.push_back({e, {{uneven(n), DType::float32, RedOp::avg, 0, true}, {uneven(n), DType::int32, RedOp::avg, 0, true}}, 2});
  }
  expect_no_failures(run_plans(plans, n));
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<Op, int>>& i) {
  return std::string(op_name(std::get<0>(i.param))) + "_n" + std::to_string(std::get<1>(i.param));
}

INSTANTIATE_TEST_SUITE_P(Registry, GlooAlgorithms,
                         ::testing::Combine(::testing::ValuesIn(kAllOps), ::testing::Values(1, 2, 3, 4, 5)), param_name);

// Only the ops that reduce have prod, min and avg.
std::vector<Op> reducing_ops() {
  std::vector<Op> out;
  for (Op op : kAllOps)
    if (op_reduces(op)) out.push_back(op);
  return out;
}
INSTANTIATE_TEST_SUITE_P(Registry, GlooReducingLibrary,
                         ::testing::Combine(::testing::ValuesIn(reducing_ops()), ::testing::Values(1, 2, 3, 4, 5)),
                         param_name);

// Every op has its "library" on gloo, the variants are there on request, and each entry says
// what PyTorch call it stands for.
TEST(GlooLibrary, EntriesAndTheirConfig) {
  for (Op op : kAllOps) {
    const AlgoEntry* lib = Registry::get().find(op, "library", "gloo");
    ASSERT_NE(lib, nullptr) << op_name(op);
    EXPECT_EQ(lib->backend, "gloo");
    EXPECT_FALSE(lib->on_request);
    EXPECT_NE(lib->prepare, nullptr);
    EXPECT_EQ(lib->traits.simplicity_rank, 0);
    ASSERT_NE(lib->config, nullptr);
    const LibraryConfig c = lib->config(*lib, CollArgs{});
    ASSERT_FALSE(c.empty());
    EXPECT_EQ(c.front().first, "pytorch_call");
    EXPECT_EQ(c.front().second.rfind("none:", 0) == 0, op == Op::reduce_scatter) << c.front().second;
  }
  std::vector<std::string> variants;
  for (const AlgoEntry& e : Registry::get().all())
    if (e.backend == "gloo" && e.on_request) {
      variants.push_back(std::string(op_name(e.op)) + "/" + e.algo);
      EXPECT_NE(e.prepare, nullptr) << e.algo;
      EXPECT_EQ(e.traits.simplicity_rank, AlgoTraits::kUnranked) << e.algo << ": as every library:ALGO (results/README.md)";
    }
  std::sort(variants.begin(), variants.end());
  EXPECT_EQ(variants, (std::vector<std::string>{"allgather/library:ring", "allreduce/library:bcube",
                                                "allreduce/library:bcube_opts", "allreduce/library:halving_doubling",
                                                "allreduce/library:ring", "allreduce/library:ring_chunked",
                                                "broadcast/library:one_to_all"}));
}

// On another backend's transport every Gloo entry refuses, saying why, before communicating.
TEST(GlooLibrary, RefusesOtherTransports) {
  ThreadWorld w(2);
  std::mutex mu;
  std::vector<std::string> reasons;
  w.run([&](ThreadTransport& t) {
    for (const AlgoEntry& e : Registry::get().all()) {
      if (e.backend != "gloo") continue;
      const verify::Case c{e.op, DType::float32, RedOp::sum, 8, 0, t.rank(), 2, false};
      const verify::Outcome o = verify::run_checked(t, e, c);
      std::lock_guard lk(mu);
      EXPECT_TRUE(o.skipped) << e.algo;
      reasons.push_back(o.skip_reason);
    }
  });
  for (const std::string& r : reasons) EXPECT_NE(r.find("need the gloo backend"), std::string::npos) << r;
}

// A rank that never joins: the library call's Gloo timeout becomes collbench's TimeoutError,
// naming the Gloo call and the measured op.
TEST(GlooLibrary, TimeoutNamesTheCall) {
  std::string message;
  std::mutex mu;
  try {
    run_gloo_ranks(
        2,
        [&](GlooTransport& t) {
          const AlgoEntry* e = Registry::get().find(Op::allreduce, "library", "gloo");
          std::vector<float> buf(16, 1.0f);
          CollArgs a;
          a.send = a.recv = buf.data();
          a.count = buf.size();
          a.op = make_reduce_op(RedOp::sum, DType::float32);
          t.library_context(0);  // both ranks connect it
          t.barrier();
          t.scope().set_call({"allreduce", "library", 64, 0, "timed"});
          if (t.rank() == 0) {
            try {
              e->run(t, a);
            } catch (const TimeoutError& ex) {
              std::lock_guard lk(mu);
              message = ex.what();
            }
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(700));
        },
        std::chrono::milliseconds(300), /*end_barrier=*/false);
  } catch (const std::exception& e) {
    FAIL() << "unexpected: " << e.what();
  }
  EXPECT_NE(message.find("gloo::allreduce"), std::string::npos) << message;
  EXPECT_NE(message.find("algo=library"), std::string::npos) << message;
}

// A peer whose process is gone (its sockets closed): a TransportError naming the Gloo call, not a
// wait for the whole timeout.
TEST(GlooLibrary, PeerGoneIsATransportError) {
  std::string message;
  run_gloo_ranks(
      2,
      [&](GlooTransport& t) {
        const AlgoEntry* e = Registry::get().find(Op::allreduce, "library", "gloo");
        std::vector<float> buf(16, 1.0f);
        CollArgs a;
        a.send = a.recv = buf.data();
        a.count = buf.size();
        a.op = make_reduce_op(RedOp::sum, DType::float32);
        t.library_context(0);
        t.barrier();
        if (t.rank() == 1) return;  // its transport and contexts close now
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const auto began = std::chrono::steady_clock::now();
        try {
          e->run(t, a);
        } catch (const TransportError& ex) {
          message = ex.what();
        }
        EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(4)) << "waited for the timeout";
      },
      std::chrono::seconds(10), /*end_barrier=*/false);
  EXPECT_NE(message.find("Gloo failed in gloo::allreduce"), std::string::npos) << message;
}

}  // namespace
}  // namespace collbench
