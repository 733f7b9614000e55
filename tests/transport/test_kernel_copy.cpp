// The kernel's single copy (transport/kernel_copy.hpp) on this process: a posted buffer read or
// written whole at any offset, across pages, and each failure returned as its errno, never a partial
// copy called done.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <vector>

#include "collectives/transport/kernel_copy.hpp"

namespace collbench {
namespace {

TEST(KernelCopy, ReadsAPostedBufferAtAnyOffset) {
  std::vector<unsigned char> src(3 * 4096 + 123);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  const RemoteBuffer b = local_buffer(src.data());
  EXPECT_EQ(b.pid, getpid());
  for (std::size_t off : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{5000}}) {
    std::vector<unsigned char> dst(src.size() - off);
    ASSERT_EQ(kernel_read(b, off, dst.data(), dst.size()), 0) << "offset " << off;
    EXPECT_TRUE(std::equal(dst.begin(), dst.end(), src.begin() + static_cast<std::ptrdiff_t>(off))) << "offset " << off;
  }
  EXPECT_EQ(kernel_read(b, 0, nullptr, 0), 0);  // nothing to read: no call
}

TEST(KernelCopy, WritesAPostedBufferAtAnyOffset) {
  std::vector<unsigned char> src(3 * 4096 + 123);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  for (std::size_t off : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{5000}}) {
    std::vector<unsigned char> dst(src.size() + off, 0xee);
    ASSERT_EQ(kernel_write(local_buffer(dst.data()), off, src.data(), src.size()), 0) << "offset " << off;
    EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin() + static_cast<std::ptrdiff_t>(off))) << "offset " << off;
    EXPECT_TRUE(std::all_of(dst.begin(), dst.begin() + static_cast<std::ptrdiff_t>(off),
                            [](unsigned char c) { return c == 0xee; }))
        << "written before the offset " << off;
  }
  EXPECT_EQ(kernel_write(local_buffer(nullptr), 0, src.data(), 0), 0);  // nothing to write: no call
}

TEST(KernelCopy, FailuresReturnTheirErrno) {
  std::vector<unsigned char> dst(64);
  EXPECT_EQ(kernel_read({getpid(), nullptr}, 0, dst.data(), dst.size()), EFAULT);
  // Beyond any pid_max (2^22 at most): no such process.
  EXPECT_EQ(kernel_read({std::int64_t{1} << 30, dst.data()}, 0, dst.data(), dst.size()), ESRCH);
  EXPECT_EQ(kernel_write({getpid(), nullptr}, 0, dst.data(), dst.size()), EFAULT);
  EXPECT_EQ(kernel_write({std::int64_t{1} << 30, dst.data()}, 0, dst.data(), dst.size()), ESRCH);
}

}  // namespace
}  // namespace collbench
