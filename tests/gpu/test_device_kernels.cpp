// CUDA reduce kernels against the host kernels, bit for bit, for every dtype × op, through
// the MemorySpace interface only. Needs a GPU: exits 77 (ctest: skipped) without one.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "collectives/gpu/gpu.hpp"

namespace collbench {
namespace {

int g_device = 0;  // chosen in main before any test runs

// Finite values of every dtype with varied bits (no NaN: its payload is not portable).
std::vector<std::byte> random_values(DType t, std::size_t n, unsigned seed) {
  std::vector<std::byte> out(n * dtype_size(t));
  std::mt19937 rng(seed);
  visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto* p = reinterpret_cast<T*>(out.data());
    std::uniform_real_distribution<float> f(-100.f, 100.f);
    for (std::size_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, float16>) p[i] = to_float16(f(rng) / 8);
      else if constexpr (std::is_same_v<T, bfloat16>) p[i] = to_bfloat16(f(rng));
      else if constexpr (std::is_floating_point_v<T>) p[i] = static_cast<T>(f(rng)) / T(3);
      else p[i] = static_cast<T>(rng());
    }
  });
  return out;
}

struct KernelCase {
  DType dtype;
  RedOp op;
};

class DeviceReduce : public ::testing::TestWithParam<KernelCase> {};

TEST_P(DeviceReduce, MatchesHostKernelBitForBit) {
  const auto [t, op] = GetParam();
  auto mem = gpu::make_cuda_memory(g_device);
  const std::size_t es = dtype_size(t);
  // Counts around the 16-byte pack size and the grid; offsets break 16-byte alignment so both
  // the vector and the scalar kernels (and the vector kernel's tail) run.
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{16}, std::size_t{1000}, std::size_t{(1u << 20) + 5}}) {
    // 1 and 3: a scalar head, then 16-byte packs (reduce_plan.hpp).
    for (std::size_t off : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
      const std::size_t bytes = (n + off) * es;
      const auto a = random_values(t, n + off, 1), b = random_values(t, n + off, 2);
      std::vector<std::byte> want(bytes), got(bytes);
      host_reduce_fn(op, t)(want.data() + off * es, a.data() + off * es, b.data() + off * es, n);
      Buffer da(*mem, bytes), db(*mem, bytes), dout(*mem, bytes);
      mem->upload(da.data(), a.data(), bytes);
      mem->upload(db.data(), b.data(), bytes);
      const ReduceOp r = make_reduce_op(op, t);
      mem->reduce(r, dout.bytes_ptr() + off * es, da.bytes_ptr() + off * es, db.bytes_ptr() + off * es, n);
      mem->download(got.data(), dout.data(), bytes);
      EXPECT_EQ(std::memcmp(got.data() + off * es, want.data() + off * es, n * es), 0)
          << dtype_name(t) << " " << redop_name(op) << " n=" << n << " offset=" << off;
      // In place (out aliases a), as the algorithms accumulate.
      mem->reduce(r, da.bytes_ptr() + off * es, da.bytes_ptr() + off * es, db.bytes_ptr() + off * es, n);
      mem->download(got.data(), da.data(), bytes);
      EXPECT_EQ(std::memcmp(got.data() + off * es, want.data() + off * es, n * es), 0)
          << "in place " << dtype_name(t) << " " << redop_name(op) << " n=" << n;
    }
    // Different misalignments (b one element further): the one-element-per-thread kernel.
    const std::size_t bytes = (n + 1) * es;
    const auto a = random_values(t, n + 1, 3), b = random_values(t, n + 1, 4);
    std::vector<std::byte> want(n * es), got(n * es);
    host_reduce_fn(op, t)(want.data(), a.data(), b.data() + es, n);
    Buffer da(*mem, bytes), db(*mem, bytes), dout(*mem, bytes);
    mem->upload(da.data(), a.data(), bytes);
    mem->upload(db.data(), b.data(), bytes);
    mem->reduce(make_reduce_op(op, t), dout.data(), da.data(), db.bytes_ptr() + es, n);
    mem->download(got.data(), dout.data(), n * es);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), n * es), 0) << "mixed alignment n=" << n;
  }
}

std::vector<KernelCase> all_cases() {
  std::vector<KernelCase> out;
  for (DType t : kAllDTypes)
    for (RedOp op : kAllRedOps) out.push_back({t, op});
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, DeviceReduce, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<KernelCase>& i) {
                           return std::string(dtype_name(i.param.dtype)) + "_" + std::string(redop_name(i.param.op));
                         });

// Every 16-bit pattern against a permutation of them all: subnormals, overflow to Inf, Inf and
// NaN operands, which random_values leaves out. The device converts float16 in hardware
// (half.hpp), the host by bit operations: the results must match bit for bit, except that a
// NaN's sign and payload are not portable: there both must be NaN.
template <class H>
void expect_every_pattern_matches_host(DType t) {
  constexpr std::size_t n = 1u << 16;
  std::vector<H> a(n), b(n), want(n), got(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i].bits = static_cast<std::uint16_t>(i);
    b[i].bits = static_cast<std::uint16_t>(i * 40503u + 12345u);  // odd multiplier: a permutation
  }
  auto mem = gpu::make_cuda_memory(g_device);
  Buffer da(*mem, n * 2), db(*mem, n * 2), dout(*mem, n * 2);
  mem->upload(da.data(), a.data(), n * 2);
  mem->upload(db.data(), b.data(), n * 2);
  const auto is_nan = [](H h) { return (h.bits & 0x7fffu) > (std::is_same_v<H, float16> ? 0x7c00u : 0x7f80u); };
  for (RedOp op : kAllRedOps) {
    host_reduce_fn(op, t)(want.data(), a.data(), b.data(), n);
    mem->reduce(make_reduce_op(op, t), dout.data(), da.data(), db.data(), n);
    mem->download(got.data(), dout.data(), n * 2);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const bool same = is_nan(want[i]) ? is_nan(got[i]) : got[i].bits == want[i].bits;
      if (!same && wrong++ < 3)
        ADD_FAILURE() << dtype_name(t) << " " << redop_name(op) << " a=0x" << std::hex << a[i].bits << " b=0x"
                      << b[i].bits << ": device 0x" << got[i].bits << ", host 0x" << want[i].bits;
    }
    EXPECT_EQ(wrong, 0u) << dtype_name(t) << " " << redop_name(op);
  }
}

TEST(DeviceReduceHalf, EveryFloat16PatternMatchesHost) { expect_every_pattern_matches_host<float16>(DType::float16); }
TEST(DeviceReduceHalf, EveryBfloat16PatternMatchesHost) {
  expect_every_pattern_matches_host<bfloat16>(DType::bfloat16);
}

TEST(CudaMemory, CopyUploadDownloadRoundTrip) {
  auto mem = gpu::make_cuda_memory(g_device);
  EXPECT_EQ(mem->kind(), MemoryKind::cuda);
  std::vector<int> h(4096), back(4096, -1);
  for (int i = 0; i < 4096; ++i) h[i] = i * 7;
  Buffer a(*mem, h.size() * 4), b(*mem, h.size() * 4);
  mem->upload(a.data(), h.data(), h.size() * 4);
  mem->copy(b.data(), a.data(), h.size() * 4);
  mem->copy(b.data(), b.data(), h.size() * 4);  // no-op in place
  mem->synchronize();
  mem->download(back.data(), b.data(), h.size() * 4);
  EXPECT_EQ(back, h);
}

}  // namespace
}  // namespace collbench

int main(int argc, char** argv) {
  std::string why;
  if (collbench::gpu::device_count(&why) == 0) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return 77;
  }
  collbench::g_device = collbench::gpu::select_device(0, 1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
