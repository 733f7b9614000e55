// The op-traits table (collectives/op_traits.hpp): order, the facts against their definitions
// (nccl-tests' sizes and busbw factors, NCCL's buffer and in-place conventions), and agreement
// with the results schema's annotations, which is what the Python tools read.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/collective.hpp"
#include "collectives/op_traits.hpp"

namespace collbench {
namespace {

using json = nlohmann::json;

std::set<Op> ops_where(bool (*pred)(const OpTraits&)) {
  std::set<Op> out;
  for (const auto& t : kOpTraits)
    if (pred(t)) out.insert(t.op);
  return out;
}

TEST(OpTraits, OneRowPerOpInEnumOrderAndNamesRoundTrip) {
  ASSERT_EQ(std::size(kOpTraits), kAllOps.size());
  for (std::size_t i = 0; i < kAllOps.size(); ++i) {
    EXPECT_EQ(kAllOps[i], static_cast<Op>(i));
    EXPECT_EQ(&op_traits(kAllOps[i]), &kOpTraits[i]);
    const std::optional<Op> parsed = parse_op(op_name(kAllOps[i]));
    ASSERT_TRUE(parsed) << op_name(kAllOps[i]);
    EXPECT_EQ(*parsed, kAllOps[i]) << op_name(kAllOps[i]);
  }
  const std::vector<std::string_view> names = {"broadcast", "reduce",  "allreduce",      "gather",
                                               "allgather", "scatter", "reduce_scatter", "alltoall"};
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(kOpTraits[i].name, names[i]);
  for (const auto& p : kP2pOpTraits) EXPECT_FALSE(parse_op(p.name)) << p.name << " is not a collective";
}

TEST(OpTraits, ReducingAndRootedOps) {
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.reduces; }),
            (std::set<Op>{Op::reduce, Op::allreduce, Op::reduce_scatter}));
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.rooted; }),
            (std::set<Op>{Op::broadcast, Op::reduce, Op::gather, Op::scatter}));
  for (Op op : kAllOps) {
    EXPECT_EQ(op_reduces(op), op_traits(op).reduces);
    EXPECT_EQ(op_has_root(op), op_traits(op).rooted);
  }
}

// nccl-tests doc/PERFORMANCE.md: allreduce 2(n-1)/n; allgather, reduce_scatter, alltoall (and
// gather, scatter) (n-1)/n; broadcast, reduce 1.
TEST(OpTraits, BusBwFactorsAreNcclTests) {
  for (int n = 1; n <= 8; ++n) {
    const double nd = n;
    for (Op op : kAllOps) {
      double want = 1.0;
      if (op == Op::allreduce) want = 2 * (nd - 1) / nd;
      else if (op != Op::broadcast && op != Op::reduce) want = (nd - 1) / nd;
      EXPECT_DOUBLE_EQ(op_traits(op).busbw.at(n), want) << op_name(op) << " n=" << n;
    }
    for (const auto& p : kP2pOpTraits) EXPECT_DOUBLE_EQ(p.busbw.at(n), 1.0) << p.name;
  }
}

// Buffers per the NCCL conventions; the nccl-tests size covers the larger buffer.
TEST(OpTraits, BufferSizesAndChunksForOneToEightRanks) {
  const std::set<Op> n_send = {Op::scatter, Op::reduce_scatter, Op::alltoall};
  const std::set<Op> n_recv = {Op::gather, Op::allgather, Op::alltoall};
  for (int n = 1; n <= 8; ++n) {
    for (Op op : kAllOps) {
      const std::size_t count = 5;
      EXPECT_EQ(send_elems(op, count, n), n_send.count(op) ? count * n : count) << op_name(op) << " n=" << n;
      EXPECT_EQ(recv_elems(op, count, n), n_recv.count(op) ? count * n : count) << op_name(op) << " n=" << n;
      const std::size_t chunks = (n_send.count(op) || n_recv.count(op)) ? n : 1;
      EXPECT_EQ(extent_chunks(op_traits(op).size_chunks, n), chunks) << op_name(op) << " n=" << n;
      // The nccl-tests size (bytes = chunks × count elements) is the larger buffer.
      EXPECT_EQ(std::max(send_elems(op, count, n), recv_elems(op, count, n)), chunks * count) << op_name(op);
    }
  }
}

// What a verifier needs: where the result is, and how in-place pointers relate.
TEST(OpTraits, VerificationFacts) {
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.result_on == Ranks::root; }),
            (std::set<Op>{Op::reduce, Op::gather}));
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.in_place_on == Ranks::root; }),
            (std::set<Op>{Op::gather, Op::scatter}));
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.in_place == InPlace::same; }),
            (std::set<Op>{Op::broadcast, Op::reduce, Op::allreduce, Op::alltoall}));
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.in_place == InPlace::send_in_recv; }),
            (std::set<Op>{Op::gather, Op::allgather}));
  EXPECT_EQ(ops_where([](const OpTraits& t) { return t.in_place == InPlace::recv_in_send; }),
            (std::set<Op>{Op::scatter, Op::reduce_scatter}));
  // The chunk an in-place pointer names lies inside the n-chunk buffer it points into.
  for (const auto& t : kOpTraits) {
    if (t.in_place == InPlace::send_in_recv) {
      EXPECT_EQ(t.recv, Extent::world) << t.name;
    } else if (t.in_place == InPlace::recv_in_send) {
      EXPECT_EQ(t.send, Extent::world) << t.name;
    } else {
      EXPECT_EQ(t.send, t.recv) << t.name;
    }
  }
}

TEST(OpTraits, PointIdentityIsWhatWasMeasuredNotHowLong) {
  const std::set<std::string_view> id(std::begin(kPointIdentity), std::end(kPointIdentity));
  EXPECT_EQ(id.size(), std::size(kPointIdentity)) << "no field twice";
  for (auto f : {"op", "algo", "backend", "device", "dtype", "redop", "root", "in_place", "bytes", "world_size", "nodes",
                 "ranks_per_node", "mode", "src", "dst"})
    EXPECT_TRUE(id.count(f)) << f;
  for (auto f : {"iters", "warmup", "samples", "time_us", "run_id", "count", "wrong", "link"})
    EXPECT_FALSE(id.count(f)) << f;
}

// ---------------------------------------------------------------- the schema file mirrors it

json schema() {
  std::ifstream in(COLLBENCH_SCHEMA_FILE);
  EXPECT_TRUE(in.good()) << COLLBENCH_SCHEMA_FILE;
  return json::parse(in);
}

std::vector<std::string> strings(const json& array) {
  std::vector<std::string> out;
  for (const auto& v : array)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

template <class Range, class F>
std::vector<std::string> names_of(const Range& r, F name) {
  std::vector<std::string> out;
  for (const auto& x : r) out.emplace_back(name(x));
  return out;
}

TEST(OpTraitsSchema, AnnotatedOpsEqualTheTable) {
  const json ops = schema().at("x-collbench-ops");
  ASSERT_EQ(ops.size(), std::size(kOpTraits) + std::size(kP2pOpTraits));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const json& row = ops[i];
    SCOPED_TRACE(row.dump());
    if (i < std::size(kOpTraits)) {
      const OpTraits& t = kOpTraits[i];
      EXPECT_EQ(row.at("op"), std::string(t.name));
      EXPECT_EQ(row.at("kind"), "collective");
      EXPECT_EQ(row.at("reduces"), t.reduces);
      EXPECT_EQ(row.at("rooted"), t.rooted);
      EXPECT_EQ(row.at("size_chunks"), t.size_chunks == Extent::world ? "n" : "1");
      EXPECT_EQ(row.at("busbw_factor").at("mul"), t.busbw.mul);
      EXPECT_EQ(row.at("busbw_factor").at("sub"), t.busbw.sub);
    } else {
      const P2pOpTraits& p = kP2pOpTraits[i - std::size(kOpTraits)];
      EXPECT_EQ(row.at("op"), std::string(p.name));
      EXPECT_EQ(row.at("kind"), "p2p");
      EXPECT_EQ(row.at("reduces"), false);
      EXPECT_EQ(row.at("rooted"), false);
      EXPECT_EQ(row.at("size_chunks"), "1");
      EXPECT_EQ(row.at("busbw_factor").at("mul"), p.busbw.mul);
      EXPECT_EQ(row.at("busbw_factor").at("sub"), p.busbw.sub);
    }
  }
}

TEST(OpTraitsSchema, RulesAndEnumsEqualTheTable) {
  const json s = schema();
  const json& defs = s.at("$defs");
  std::vector<std::string> all = names_of(kOpTraits, [](const OpTraits& t) { return t.name; });
  std::vector<std::string> p2p = names_of(kP2pOpTraits, [](const P2pOpTraits& t) { return t.name; });
  std::vector<std::string> reducing, rooted;
  for (const auto& t : kOpTraits) {
    if (t.reduces) reducing.emplace_back(t.name);
    if (t.rooted) rooted.emplace_back(t.name);
  }
  all.insert(all.end(), p2p.begin(), p2p.end());
  EXPECT_EQ(strings(defs.at("op").at("enum")), all);
  EXPECT_EQ(strings(defs.at("reducing_ops_have_a_redop").at("if").at("properties").at("op").at("enum")), reducing);
  EXPECT_EQ(strings(defs.at("rooted_ops_have_a_root").at("if").at("properties").at("op").at("enum")), rooted);
  EXPECT_EQ(strings(defs.at("p2p_ops_have_a_pair").at("if").at("properties").at("op").at("enum")), p2p);

  const std::vector<std::string> identity =
      names_of(kPointIdentity, [](std::string_view f) { return std::string(f); });
  EXPECT_EQ(strings(s.at("x-collbench-point-identity")), identity);

  const auto dtypes = names_of(kAllDTypes, [](DType t) { return dtype_name(t); });
  EXPECT_EQ(strings(defs.at("dtype").at("enum")), dtypes);
  ASSERT_EQ(s.at("x-collbench-dtype-size").size(), kAllDTypes.size());
  for (DType t : kAllDTypes)
    EXPECT_EQ(s.at("x-collbench-dtype-size").at(std::string(dtype_name(t))), dtype_size(t)) << dtype_name(t);

  const auto redops = names_of(kAllRedOps, [](RedOp r) { return redop_name(r); });
  EXPECT_EQ(strings(defs.at("redop").at("enum")), redops);
  const json& redop_field = defs.at("result").at("properties").at("redop").at("enum");
  EXPECT_EQ(strings(redop_field), redops);
  EXPECT_TRUE(redop_field.back().is_null()) << "redop is null for non-reducing ops";
}

}  // namespace
}  // namespace collbench
