#include <gtest/gtest.h>

#include "collectives/collective.hpp"
#include "collectives/core/reduce_op.hpp"

namespace collbench {
namespace {

TEST(DType, NamesRoundTrip) {
  for (DType t : kAllDTypes) EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  EXPECT_EQ(parse_dtype("float"), DType::float32);
  EXPECT_EQ(parse_dtype("half"), DType::float16);
  EXPECT_EQ(parse_dtype("bf16"), DType::bfloat16);
  EXPECT_FALSE(parse_dtype("float128"));
  EXPECT_EQ(dtype_size(DType::bfloat16), 2u);
  EXPECT_EQ(dtype_size(DType::int64), 8u);
}

TEST(RedOpNames, RoundTrip) {
  for (RedOp op : kAllRedOps) EXPECT_EQ(parse_redop(redop_name(op)), op);
  EXPECT_EQ(parse_redop("avg"), RedOp::avg);
  EXPECT_FALSE(parse_redop("mean"));
}

TEST(OpNames, RoundTripAndBufferSizes) {
  for (Op op : kAllOps) EXPECT_EQ(parse_op(op_name(op)), op);
  EXPECT_FALSE(parse_op("allreduce2"));
  EXPECT_EQ(send_elems(Op::alltoall, 3, 4), 12u);
  EXPECT_EQ(recv_elems(Op::allgather, 3, 4), 12u);
  EXPECT_EQ(recv_elems(Op::reduce_scatter, 3, 4), 3u);
  EXPECT_EQ(send_elems(Op::reduce_scatter, 3, 4), 12u);
}

}  // namespace
}  // namespace collbench
