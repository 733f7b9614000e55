// The same checks as the thread suite, through real MPI processes (mpirun -np 2..5):
// every custom algorithm over the MPI transport and every MPI library entry.
#include <gtest/gtest.h>

#include <algorithm>
#include <mpi.h>

#include <optional>
#include <string>

#include "collectives/registry.hpp"
#include "collectives/backends/mpi/mpi_transport.hpp"
#include "common/cases.hpp"

namespace collbench {
namespace {

class MpiCollectives : public ::testing::TestWithParam<const AlgoEntry*> {};

std::vector<const AlgoEntry*> mpi_entries() {
  std::vector<const AlgoEntry*> out;
  for (const AlgoEntry& e : Registry::get().all())
    if (e.backend == "any" || e.backend == "mpi") out.push_back(&e);
  return out;
}

// The refusals this suite expects, written from the documented limits (not from the entries'
// own supports(), so an entry refusing too much turns the suite red): every rank is on one
// node, so han (Open MPI's coll/han, multi-node only) refuses every case; Open MPI's forced
// coll/tuned algorithms (library:ALGO) refuse the cases where Open MPI would silently run
// another algorithm (mpi_tuned.cpp cites each from ompi/mca/coll/base); the custom algorithms
// and "library" itself refuse nothing. MPICH's forced algorithms refuse where MPICH's check does.
// library:segmented_ring runs with a 64-byte --segment (the others with their own segment): Open
// MPI runs it only from world size x segment elements on.
constexpr std::size_t kTunedSegment = 64;
std::size_t segment_for(const AlgoEntry& e) { return e.algo == "library:segmented_ring" ? kTunedSegment : 0; }

std::optional<std::string> expected_refusal(const AlgoEntry& e, const verify::Case& c) {
  const auto n = static_cast<std::size_t>(c.world);
  std::size_t pof2 = 1;
  while (pof2 * 2 <= n) pof2 *= 2;
  if (e.backend != "mpi" || e.algo == "library") return std::nullopt;
  if (e.algo == "han") return "one node";
#if defined(MPICH_VERSION)
  // MPICH's forced algorithms (mpi_mpich.cpp): refused where MPICH 4.0.2's own check refuses
  // the arguments (measured over these dtypes, ops and counts at 2-5 ranks; its checks read
  // HANDLE_IS_BUILTIN(op) && count >= pof2 for reduce_scatter_allgather, a power-of-two world for
  // recursive_doubling allgather and the noncommutative reduce-scatter).
  {
    const std::string v = e.algo.substr(e.algo.find(':') + 1);
    const bool user_op = c.dtype == DType::float16 || c.dtype == DType::bfloat16;  // MPI_Op_create
    if (n < 2) return "one rank: MPICH runs no algorithm";
    // MPI_Allgather and MPI_Reduce_scatter_block of nothing return before MPICH picks an algorithm
    // (MPI_Allreduce of nothing reaches reduce_scatter_allgather's check: 0 < pof2).
    if (c.count == 0 && (e.op == Op::allgather || e.op == Op::reduce_scatter)) return std::nullopt;
    if (e.op == Op::allreduce && v == "reduce_scatter_allgather" && (user_op || c.count < pof2))
      return "a user-defined op, or count < power-of-two ranks";
    if (((e.op == Op::allgather && v == "recursive_doubling") || (e.op == Op::reduce_scatter && v == "noncommutative")) &&
        n != pof2)
      return "world size not a power of two";
    return std::nullopt;
  }
#elif !defined(OPEN_MPI)
  if (true) return "not Open MPI";
#endif
  if (n < 2) return "one rank: coll/self serves it";
  const std::string v = e.algo.substr(e.algo.find(':') + 1);  // library:ring -> ring
  const bool ar = e.op == Op::allreduce, bc = e.op == Op::broadcast, ag = e.op == Op::allgather;
  if ((ar && v == "ring") || (bc && (v == "scatter_allgather" || v == "scatter_allgather_ring")))
    return c.count < n ? std::optional<std::string>("count < world size") : std::nullopt;
  if (ar && v == "segmented_ring")
    return c.count < n * (kTunedSegment / dtype_size(c.dtype)) ? std::optional<std::string>("count < world size x segment")
                                                                : std::nullopt;
  if (ar && v == "rabenseifner")
    return c.count < pof2 ? std::optional<std::string>("count < power-of-two ranks") : std::nullopt;
  if (ag && v == "recursive_doubling")
    return n != pof2 ? std::optional<std::string>("world size not a power of two") : std::nullopt;
  if (ag && v == "neighbor") return n % 2 ? std::optional<std::string>("odd world size") : std::nullopt;
  if (ag && v == "two_proc") return n != 2 ? std::optional<std::string>("world size != 2") : std::nullopt;
  if (bc && v == "split_binary_tree") return c.count < 2 ? std::optional<std::string>("count < 2") : std::nullopt;
  return std::nullopt;
}

TEST_P(MpiCollectives, VerifiedOnEveryCase) {
  const AlgoEntry& e = *GetParam();
  MpiTransport t(MPI_COMM_WORLD);
  t.scope().set_timeout(std::chrono::seconds(60));
  testing::CaseSpace s{testing::small_counts(t.size()), {DType::int8, DType::float16, DType::bfloat16, DType::float32, DType::float64, DType::int64},
                       {std::begin(kAllRedOps), std::end(kAllRedOps)}};
  s.counts.push_back((1u << 18) + 1);  // a large, uneven count too
  std::string first_failure;
  long failures = 0, wrong_skips = 0, skipped = 0, cases = 0;
  for (const verify::Case& c : testing::expand(e.op, t.size(), t.rank(), s)) {
    if (c.count > 100000 && (c.dtype != DType::float32 || c.redop != RedOp::sum)) continue;
    t.scope().set_call({std::string(op_name(e.op)), e.algo, c.count * dtype_size(c.dtype), -1, "test"});
    const verify::Outcome o = verify::run_checked(t, e, c, segment_for(e));  // NotSupported -> skipped
    const std::optional<std::string> expected = expected_refusal(e, c);
    // Every rank agrees: wrong elements, and a skip that is not the expected one.
    long bad[2] = {static_cast<long>(o.check.wrong), o.skipped != expected.has_value() ? 1L : 0L}, total[2] = {0, 0};
    MPI_Allreduce(bad, total, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if ((total[0] || total[1]) && first_failure.empty())
      first_failure = testing::describe(c) + ": " + std::to_string(total[0]) + " wrong" +
                      (total[1] ? o.skipped ? ", refused (none expected): " + o.skip_reason
                                            : ", ran where a refusal is expected (" + expected.value_or("") + ")"
                                : "");
    failures += total[0] != 0;
    wrong_skips += total[1] != 0;
    skipped += o.skipped;
    ++cases;
  }
  EXPECT_GT(cases, 0);
  EXPECT_EQ(failures + wrong_skips, 0) << op_name(e.op) << "/" << e.algo << " (" << e.backend << "): " << failures
                                       << " wrong, " << wrong_skips << " unexpected skips or runs, first: " << first_failure;
  if (t.rank() == 0 && skipped)
    std::printf("  %s/%s: %ld of %ld case(s) refused, as expected\n", std::string(op_name(e.op)).c_str(), e.algo.c_str(),
                skipped, cases);
}

// A test name per entry: op_algo, ':' made '_' (library:ring -> library_ring).
std::string entry_name(const ::testing::TestParamInfo<const AlgoEntry*>& i) {
  std::string name = std::string(op_name(i.param->op)) + "_" + i.param->algo;
  std::replace(name.begin(), name.end(), ':', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Registry, MpiCollectives, ::testing::ValuesIn(mpi_entries()), entry_name);

// The library entries' bound calls (what the harness times): every case, each bound once and
// run twice on its buffers, as the timed loop reuses it (a float16/bfloat16 user op included).
class MpiPrepared : public ::testing::TestWithParam<const AlgoEntry*> {};

std::vector<const AlgoEntry*> prepared_entries() {
  std::vector<const AlgoEntry*> out;
  for (const AlgoEntry* e : mpi_entries())
    if (e->prepare) out.push_back(e);
  return out;
}

TEST_P(MpiPrepared, VerifiedOnEveryCaseAndReused) {
  const AlgoEntry& e = *GetParam();
  MpiTransport t(MPI_COMM_WORLD);
  t.scope().set_timeout(std::chrono::seconds(60));
  testing::CaseSpace s{testing::small_counts(t.size()), {DType::int8, DType::bfloat16, DType::float32, DType::int64},
                       {RedOp::sum, RedOp::max}};
  std::string first_failure;
  long failures = 0, cases = 0;
  for (const verify::Case& c : testing::expand(e.op, t.size(), t.rank(), s)) {
    t.scope().set_call({std::string(op_name(e.op)), e.algo, c.count * dtype_size(c.dtype), -1, "test"});
    const verify::Outcome o = verify::run_checked(t, e, c, 0, nullptr, nullptr, /*prepared_calls=*/2);
    ++cases;
    // A refusal only where expected (MPICH's own check, on every rank alike), never a crash.
    ASSERT_EQ(o.skipped, expected_refusal(e, c).has_value()) << testing::describe(c) << ": " << o.skip_reason;
    if (o.skipped) continue;
    long wrong = static_cast<long>(o.check.wrong), total = 0;
    MPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (total && first_failure.empty()) first_failure = testing::describe(c) + ": " + std::to_string(total) + " wrong";
    failures += total != 0;
  }
  EXPECT_GT(cases, 0);
  EXPECT_EQ(failures, 0) << op_name(e.op) << "/" << e.algo << ", first: " << first_failure;
}

INSTANTIATE_TEST_SUITE_P(Library, MpiPrepared, ::testing::ValuesIn(prepared_entries()), entry_name);

// The node-aware algorithms under emulated placements (every rank runs on this machine, so the
// node layout is set on the transport, as the harness sets the discovered one): blocked, as
// ceil(n/2) + floor(n/2) ranks (uneven at odd n), and round-robin over two nodes. Real MPI
// splits and, in each node group, real MPI shared windows.
struct HierAt {
  const AlgoEntry* entry;
  bool round_robin;
};

std::vector<HierAt> hier_entries() {
  std::vector<HierAt> out;
  for (const AlgoEntry& e : Registry::get().all())
    if (e.backend == "any" && e.algo.starts_with("hier"))
      for (bool rr : {false, true}) out.push_back({&e, rr});
  return out;
}

class MpiHier : public ::testing::TestWithParam<HierAt> {};

TEST_P(MpiHier, VerifiedOnTwoNodeLayouts) {
  const auto [entry, round_robin] = GetParam();
  const AlgoEntry& e = *entry;
  MpiTransport t(MPI_COMM_WORLD);
  t.scope().set_timeout(std::chrono::seconds(60));
  const int n = t.size();
  std::vector<int> nodes(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) nodes[static_cast<std::size_t>(r)] = round_robin ? r % 2 : (r < (n + 1) / 2 ? 0 : 1);
  t.set_node_layout(nodes);
  const bool refuses = e.algo == "hier_ring" && t.node_layout().uneven();
  testing::CaseSpace s{
      testing::small_counts(n), {DType::int8, DType::float32, DType::float64}, {RedOp::sum, RedOp::max}};
  s.counts.push_back((1u << 18) + 1);
  long failures = 0, wrong_skips = 0;
  std::string first_failure;
  for (const verify::Case& c : testing::expand(e.op, n, t.rank(), s)) {
    if (c.count > 100000 && c.dtype != DType::float32) continue;
    t.scope().set_call({std::string(op_name(e.op)), e.algo, c.count * dtype_size(c.dtype), -1, "test"});
    const verify::Outcome o = verify::run_checked(t, e, c);
    long bad[2] = {static_cast<long>(o.check.wrong), o.skipped != refuses ? 1L : 0L}, total[2] = {0, 0};
    MPI_Allreduce(bad, total, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if ((total[0] || total[1]) && first_failure.empty())
      first_failure = testing::describe(c) + ": " + std::to_string(total[0]) + " wrong" +
                      (total[1] ? refuses ? ", ran on an uneven layout" : ", refused: " + o.skip_reason : "");
    failures += total[0] != 0;
    wrong_skips += total[1] != 0;
  }
  EXPECT_EQ(failures + wrong_skips, 0) << e.algo << " on " << (round_robin ? "round-robin" : "blocked")
                                       << " nodes, first: " << first_failure;
}

INSTANTIATE_TEST_SUITE_P(Layouts, MpiHier, ::testing::ValuesIn(hier_entries()),
                         [](const ::testing::TestParamInfo<HierAt>& i) {
                           return std::string(op_name(i.param.entry->op)) + "_" + i.param.entry->algo +
                                  (i.param.round_robin ? "_round_robin" : "_blocked");
                         });

}  // namespace
}  // namespace collbench
