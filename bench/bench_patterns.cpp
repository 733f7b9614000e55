// Topology math is on every algorithm's path (once per step): it must cost nanoseconds.
#include <benchmark/benchmark.h>

#include "collectives/patterns/chunks.hpp"
#include "collectives/patterns/ring.hpp"

namespace collbench::patterns {
namespace {

void BM_Chunk(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0));
  std::size_t acc = 0;
  for (auto _ : st)
    for (int i = 0; i < n; ++i) benchmark::DoNotOptimize(acc += chunk(1000003, n, i).count);
  st.SetItemsProcessed(st.iterations() * n);
}
BENCHMARK(BM_Chunk)->Arg(8)->Arg(64)->Arg(1024);

void BM_RingSchedule(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0));
  int acc = 0;
  for (auto _ : st)
    for (int s = 0; s + 1 < n; ++s) benchmark::DoNotOptimize(acc += rs_send_chunk(3, s, n) + ag_recv_chunk(3, s, n));
  st.SetItemsProcessed(st.iterations() * (n - 1));
}
BENCHMARK(BM_RingSchedule)->Arg(8)->Arg(64)->Arg(1024);

}  // namespace
}  // namespace collbench::patterns

BENCHMARK_MAIN();
