// Naive allreduce, the teaching baseline: the registered naive reduce to rank 0, then the
// registered naive broadcast from it. Rank 0's link and reduce kernel carry everything:
// 2(n-1) × count through one rank, against 2(n-1)/n × count per rank for the ring.
#include "collectives/registry.hpp"

namespace collbench::allreduce_naive {
namespace {

const AlgoEntry& entry(Op op) {
  const AlgoEntry* e = Registry::get().find(op, "naive", "any");
  if (!e) throw Error("allreduce/naive needs " + std::string(op_name(op)) + "/naive, which is not registered");
  return *e;
}

void run(Transport& t, const CollArgs& a) {
  // Looked up once: the registry is complete before any algorithm runs.
  static const AlgoEntry& reduce = entry(Op::reduce);
  static const AlgoEntry& broadcast = entry(Op::broadcast);
  CollArgs to_root = a;
  to_root.root = 0;
  reduce.run(t, to_root);  // rank 0: recv = the reduction (recv unused elsewhere)
  CollArgs from_root = to_root;
  from_root.send = a.recv;  // broadcast rank 0's recv in place
  broadcast.run(t, from_root);
}

COLLBENCH_REGISTER({Op::allreduce, "naive", "any", "reduce/naive to rank 0, then broadcast/naive from it",
                    "any world size, any count", &run}, {.simplicity_rank = 20});

}  // namespace
}  // namespace collbench::allreduce_naive
