// Topology math is on every algorithm's path (once per step): it must cost nanoseconds.
#include <benchmark/benchmark.h>

#include "collectives/patterns/binomial.hpp"
#include "collectives/patterns/chunks.hpp"
#include "collectives/patterns/recursive_doubling.hpp"
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

// Binomial tree: every rank's parent and children (broadcast/reduce/gather/scatter trees).
void BM_BinomialTree(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0));
  int acc = 0;
  for (auto _ : st)
    for (int r = 0; r < n; ++r) {
      const int v = binomial::vrank(r, 3 % n, n);
      const binomial::Children c = binomial::children(v, n);
      benchmark::DoNotOptimize(acc += c.count + (v ? binomial::parent(v) : 0));
    }
  st.SetItemsProcessed(st.iterations() * n);
}
BENCHMARK(BM_BinomialTree)->Arg(8)->Arg(64)->Arg(1000);

// Recursive doubling with folding (n not a power of two): every step's partner of a rank.
void BM_RecursiveDoublingPartners(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0));
  const Fold f(n);
  const int me = f.folded(n - 1) ? 0 : n - 1;  // a rank that takes part in the exchanges
  int acc = 0;
  for (auto _ : st)
    for (int s = 0; s < f.steps(); ++s) benchmark::DoNotOptimize(acc += f.partner(me, doubling_mask(s)));
  st.SetItemsProcessed(st.iterations() * f.steps());
}
BENCHMARK(BM_RecursiveDoublingPartners)->Arg(8)->Arg(100)->Arg(1000);

}  // namespace
}  // namespace collbench::patterns

BENCHMARK_MAIN();
