// Host reduce kernels (every dtype × op) next to a memcpy of the same size: the kernels are
// the roofline of every reducing algorithm. Bytes/s counts the bytes of one input array, as
// for memcpy, so "float32 sum at 80 % of memcpy" compares like with like. Each reduce row
// also carries `of_memcpy`: its bytes/s over a memcpy of the same size timed in the same
// process just before it (median of 5 copies), so the ratio holds on a noisy machine too.
// stream_copy rows (core/stream_copy.hpp, the shm ops' final copies by streaming stores) carry
// the same `of_memcpy`: where it is above 1, streaming pays for a copy repeated on one buffer.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <string>

#include "collectives/core/memory.hpp"
#include "collectives/core/reduce_op.hpp"
#include "collectives/core/stream_copy.hpp"

namespace collbench {
namespace {

// memcpy bytes/s at `bytes`: median of 5 timed copies after one untimed.
double memcpy_rate(std::size_t bytes) {
  HostMemory mem;
  Buffer dst(mem, bytes), src(mem, bytes);
  std::memset(src.data(), 1, bytes);
  std::memset(dst.data(), 0, bytes);
  std::array<double, 5> s{};
  const int reps = bytes >= (8 << 20) ? 1 : static_cast<int>((8 << 20) / bytes);
  for (int k = -1; k < static_cast<int>(s.size()); ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) {
      std::memcpy(dst.data(), src.data(), bytes);
      benchmark::ClobberMemory();
    }
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (k >= 0) s[k] = dt / reps;
  }
  std::sort(s.begin(), s.end());
  return static_cast<double>(bytes) / s[s.size() / 2];
}

// In-place accumulate (out aliases a), the form the ring algorithms use.
void BM_Reduce(benchmark::State& st, DType t, RedOp op) {
  const std::size_t bytes = static_cast<std::size_t>(st.range(0));
  const std::size_t n = bytes / dtype_size(t);
  HostMemory mem;
  Buffer acc(mem, bytes), in(mem, bytes);
  std::memset(acc.data(), 0, bytes);
  std::memset(in.data(), 0, bytes);
  const ReduceFn fn = host_reduce_fn(op, t);
  const double copy_rate = memcpy_rate(bytes);
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : st) {
    fn(acc.data(), acc.data(), in.data(), n);
    benchmark::ClobberMemory();
  }
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(bytes));
  // Wall-clock rate of this kernel over memcpy's, both at this size.
  if (dt > 0) st.counters["of_memcpy"] = static_cast<double>(st.iterations()) * static_cast<double>(bytes) / dt / copy_rate;
}

void BM_Memcpy(benchmark::State& st) {
  const std::size_t bytes = static_cast<std::size_t>(st.range(0));
  HostMemory mem;
  Buffer dst(mem, bytes), src(mem, bytes);
  std::memset(src.data(), 1, bytes);
  std::memset(dst.data(), 0, bytes);  // touch pages outside the timed loop
  for (auto _ : st) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(bytes));
}

// The copy by streaming stores, against memcpy's rate at the same size as BM_Reduce is.
void BM_StreamCopy(benchmark::State& st) {
  const std::size_t bytes = static_cast<std::size_t>(st.range(0));
  HostMemory mem;
  Buffer dst(mem, bytes), src(mem, bytes);
  std::memset(src.data(), 1, bytes);
  std::memset(dst.data(), 0, bytes);
  const double copy_rate = memcpy_rate(bytes);
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : st) {
    stream_copy(dst.data(), src.data(), bytes);
    benchmark::ClobberMemory();
  }
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(bytes));
  if (dt > 0) st.counters["of_memcpy"] = static_cast<double>(st.iterations()) * static_cast<double>(bytes) / dt / copy_rate;
}

// 64 KiB (L2), 1 MiB (L3), 64 MiB (DRAM, beyond the last-level cache).
constexpr int64_t kSizes[] = {64 << 10, 1 << 20, 64 << 20};
// Around the L2s of both families (1 MiB EPYC, 2 MiB Xeon), where streaming starts to pay.
constexpr int64_t kStreamSizes[] = {256 << 10, 1 << 20, 2 << 20, 4 << 20, 16 << 20, 64 << 20};

int register_all() {
  for (int64_t s : kSizes) benchmark::RegisterBenchmark("memcpy", BM_Memcpy)->Arg(s);
  for (int64_t s : kStreamSizes) benchmark::RegisterBenchmark("stream_copy", BM_StreamCopy)->Arg(s);
  for (DType t : kAllDTypes)
    for (RedOp op : kAllRedOps) {
      const std::string name = "reduce/" + std::string(dtype_name(t)) + "/" + std::string(redop_name(op));
      for (int64_t s : kSizes) benchmark::RegisterBenchmark(name.c_str(), BM_Reduce, t, op)->Arg(s);
    }
  return 0;
}
const int registered = register_all();

}  // namespace
}  // namespace collbench

BENCHMARK_MAIN();
