// Every registered allreduce algorithm on the in-process thread transport (4 ranks) at a
// few sizes: measures algorithm overhead (scheduling, copies, reduce passes) without a
// network. Threads share the 2 cores here, so compare algorithms, not absolute numbers.
#include <benchmark/benchmark.h>

#include <string>

#include "collectives/registry.hpp"
#include "collectives/backends/thread/thread_transport.hpp"

namespace collbench {
namespace {

constexpr int kRanks = 4;
constexpr int kOpsPerIteration = 10;

void BM_Allreduce(benchmark::State& st, const AlgoEntry* e) {
  const std::size_t bytes = static_cast<std::size_t>(st.range(0));
  const std::size_t count = bytes / 4;
  ThreadWorld world(kRanks);
  for (auto _ : st) {
    // One world.run per iteration: thread start-up is amortised over kOpsPerIteration ops.
    world.run([&](ThreadTransport& t) {
      Buffer send(t.memory(), bytes), recv(t.memory(), bytes);
      Workspace ws(t.memory());
      CollArgs a;
      a.workspace = &ws;
      a.send = send.data();
      a.recv = recv.data();
      a.count = count;
      a.dtype = DType::float32;
      a.op = make_reduce_op(RedOp::sum, DType::float32);
      for (int i = 0; i < kOpsPerIteration; ++i) e->run(t, a);
    });
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * kOpsPerIteration * static_cast<int64_t>(bytes));
}

int register_all() {
  for (const AlgoEntry& e : Registry::get().all()) {
    if (e.op != Op::allreduce || e.backend != "any") continue;
    const std::string name = "allreduce/" + e.algo + "/threads:" + std::to_string(kRanks);
    benchmark::RegisterBenchmark(name.c_str(), BM_Allreduce, &e)
        ->Arg(4 << 10)
        ->Arg(256 << 10)
        ->Arg(4 << 20)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  return 0;
}
const int registered = register_all();

}  // namespace
}  // namespace collbench

BENCHMARK_MAIN();
