// The verification must catch a wrong answer: a deliberately wrong reduction, planted here
// in the test (not in the library), makes every reducing algorithm report wrong elements.
#include <gtest/gtest.h>

#include <atomic>

#include "collectives/registry.hpp"
#include "collectives/backends/thread/thread_transport.hpp"
#include "collectives/verify/check.hpp"

namespace collbench {
namespace {

// "sum" that subtracts: wrong for every element where b != 0.
void wrong_sum_i32(void* out, const void* a, const void* b, std::size_t n) {
  auto* o = static_cast<std::int32_t*>(out);
  auto* x = static_cast<const std::int32_t*>(a);
  auto* y = static_cast<const std::int32_t*>(b);
  for (std::size_t i = 0; i < n; ++i) o[i] = x[i] - y[i];
}

TEST(CheckIsLive, PlantedWrongReductionIsReported) {
  int reducing = 0;
  for (const AlgoEntry& e : Registry::get().all()) {
    if (e.backend != "any" || !op_reduces(e.op)) continue;
    ++reducing;
    ThreadWorld w(4);
    std::atomic<std::size_t> wrong{0};
    const ReduceOp planted{RedOp::sum, DType::int32, &wrong_sum_i32};
    w.run([&](ThreadTransport& t) {
      verify::Case c{e.op, DType::int32, RedOp::sum, 1000, 0, t.rank(), 4, false};
      wrong += verify::run_checked(t, e, c, 0, &planted).check.wrong;
    });
    EXPECT_GT(wrong.load(), 0u) << op_name(e.op) << "/" << e.algo << " did not notice a wrong reduction";
  }
  EXPECT_GT(reducing, 0);
}

TEST(CheckIsLive, CorruptedResultIsCountedExactly) {
  verify::Case c{Op::allgather, DType::float32, RedOp::sum, 10, 0, 1, 3, false};
  std::vector<float> send(10), recv(30);
  verify::fill(c, send.data(), recv.data());
  // Build the right answer by hand, then break two elements.
  for (int r = 0; r < 3; ++r)
    for (std::size_t i = 0; i < 10; ++i) recv[r * 10 + i] = static_cast<float>(verify::input_value(c, r, i));
  EXPECT_EQ(verify::check(c, send.data(), recv.data()).wrong, 0u);
  recv[3] += 1;
  recv[29] = 99;
  const verify::Check k = verify::check(c, send.data(), recv.data());
  EXPECT_EQ(k.wrong, 2u);
  EXPECT_EQ(k.first_index, 3u);
}

}  // namespace
}  // namespace collbench
