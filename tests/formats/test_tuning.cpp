// The tuning file's reader (collectives/formats/tuning.cpp): the layout and range each size
// chooses, cited by line, and bad files refused naming file and line.
#include <gtest/gtest.h>

#include <string>

#include "collectives/core/error.hpp"
#include "collectives/formats/tuning.hpp"

namespace collbench {
namespace {

// As colltune writes it: one range per line (line numbers below count from 1).
const std::string kFile = R"(schema: collbench-tuning/1
tool: colltune
entries:
  - op: allreduce
    backend: mpi
    device: cpu
    layout: {nodes: 2, ranks_per_node: 2, world_size: 4}
    ranges:
      - {min_bytes: 0, max_bytes: 4095, algo: library}
      - {min_bytes: 4096, max_bytes: 1048575, algo: hier_leader}
      - {min_bytes: 1048576, max_bytes: null, algo: hier_ring}
  - op: allreduce
    backend: mpi
    device: cpu
    layout: {nodes: 2, ranks_per_node: [3, 1], world_size: 4}
    ranges:
      - {min_bytes: 0, max_bytes: null, algo: rabenseifner}
  - op: allreduce
    backend: mpi
    device: cpu
    layout: {nodes: 1, ranks_per_node: 4, world_size: 4}
    ranges:
      - {min_bytes: 0, max_bytes: null, algo: shm}
)";

TunedLayout even(int nodes, int per) { return {std::vector<int>(static_cast<std::size_t>(nodes), per)}; }

TEST(Tuning, ChoosesTheRangeOfTheExactLayoutAndCitesItsLine) {
  const Tuning t = Tuning::parse(kFile, "t.yaml");
  const auto at = [&](std::uint64_t bytes) { return t.choose(Op::allreduce, "mpi", "cpu", even(2, 2), bytes); };
  EXPECT_EQ(at(0).algo, "library");
  EXPECT_EQ(at(4095).algo, "library");
  EXPECT_EQ(at(4096).algo, "hier_leader");
  EXPECT_EQ(at(4096).origin, "t.yaml:10");
  EXPECT_EQ(at(4096).match, "exact");
  EXPECT_EQ(at(1u << 30).algo, "hier_ring");
  EXPECT_EQ(at(1u << 30).origin, "t.yaml:11");
  // Uneven layouts match by their per-node counts, in node order.
  EXPECT_EQ(t.choose(Op::allreduce, "mpi", "cpu", {{3, 1}}, 8).algo, "rabenseifner");
  EXPECT_EQ(t.choose(Op::allreduce, "mpi", "cpu", {{3, 1}}, 8).match, "exact");
}

TEST(Tuning, FallsBackToTheNearestLayoutThenTheLibrary) {
  const Tuning t = Tuning::parse(kFile, "t.yaml");
  // 2 x 3: no entry; the nearest has the same node count (2 x 2 and [3, 1] tie on ranks apart:
  // 2 each; the smaller world wins, both 4: the first listed).
  const TunedChoice c = t.choose(Op::allreduce, "mpi", "cpu", even(2, 3), 1u << 21);
  EXPECT_EQ(c.algo, "hier_ring");
  EXPECT_EQ(c.match, "nearest 2x2");
  // 1 x 2: same node count as 1 x 4.
  EXPECT_EQ(t.choose(Op::allreduce, "mpi", "cpu", even(1, 2), 8).algo, "shm");
  EXPECT_EQ(t.choose(Op::allreduce, "mpi", "cpu", even(1, 2), 8).match, "nearest 1x4");
  // Another op, backend or device: nothing applies, the library runs and the record says why.
  for (const TunedChoice& none :
       {t.choose(Op::broadcast, "mpi", "cpu", even(2, 2), 8), t.choose(Op::allreduce, "nccl", "cuda", even(2, 2), 8)}) {
    EXPECT_EQ(none.algo, "library");
    EXPECT_EQ(none.origin, "none");
    EXPECT_NE(none.match.find("no entry"), std::string::npos) << none.match;
  }
}

void expect_refused(const std::string& text, const std::string& needle) {
  try {
    Tuning::parse(text, "bad.yaml");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.yaml:"), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

TEST(Tuning, RefusesBadFilesNamingFileAndLine) {
  expect_refused("schema: collbench-tuning/2\nentries: []\n", "schema");
  expect_refused("[1, 2", "not YAML");
  expect_refused("schema: collbench-tuning/1\n", "missing 'entries'");
  const std::string head =
      "schema: collbench-tuning/1\nentries:\n  - op: allreduce\n    backend: mpi\n    device: cpu\n";
  const std::string layout = "    layout: {nodes: 1, ranks_per_node: 2, world_size: 2}\n";
  expect_refused(head + layout + "    ranges:\n      - {min_bytes: 8, max_bytes: null, algo: ring}\n",
                 "expected min_bytes 0");
  expect_refused(head + layout + "    ranges:\n      - {min_bytes: 0, max_bytes: 7, algo: ring}\n", "max_bytes: null");
  expect_refused(head + layout +
                     "    ranges:\n      - {min_bytes: 0, max_bytes: 7, algo: ring}\n"
                     "      - {min_bytes: 9, max_bytes: null, algo: ring}\n",
                 "bad.yaml:9: ranges must tile");
  expect_refused(head + "    layout: {nodes: 3, ranks_per_node: [2, 2], world_size: 4}\n" +
                     "    ranges:\n      - {min_bytes: 0, max_bytes: null, algo: ring}\n",
                 "does not fit nodes 3 and world_size 4");
  expect_refused("schema: collbench-tuning/1\nentries:\n  - op: allreduc\n", "unknown op");
  // Types as the schema sees them once the YAML is loaded (results/schema/collbench-tuning-1.json).
  const std::string ring = "    ranges:\n      - {min_bytes: 0, max_bytes: null, algo: ring}\n";
  expect_refused("schema: collbench-tuning/1\nentries: []\n", "entries is not a non-empty list");
  expect_refused(head + layout + "    ranges:\n      - {min_bytes: '0', max_bytes: null, algo: ring}\n",
                 "bad.yaml:8: min_bytes is a string, not an integer");
  expect_refused(head + layout + "    ranges:\n      - {min_bytes: 0.5, max_bytes: null, algo: ring}\n",
                 "min_bytes is a number, not an integer");
  expect_refused("schema: collbench-tuning/1\nentries:\n  - op: allreduce\n    backend: 5\n",
                 "backend is an integer, not a name");
  expect_refused(head + "    layout: {nodes: 1, ranks_per_node: 2}\n" + ring, "missing 'world_size'");
  expect_refused(head + layout + ring + "  - op: allreduce\n    backend: mpi\n    device: cpu\n" + layout + ring,
                 "bad.yaml:9: a second entry for allreduce mpi/cpu 1x2 (the first is on line 3)");
  // PyYAML's integers: 1_024 and 0x400 are 1024, so they tile like it.
  EXPECT_NO_THROW(Tuning::parse(head + layout + "    ranges:\n      - {min_bytes: 0, max_bytes: 1_023, algo: ring}\n"
                                "      - {min_bytes: 0x400, max_bytes: null, algo: tree}\n", "ok.yaml"));
}

}  // namespace
}  // namespace collbench
