#include "collectives/transport/kernel_copy.hpp"

#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

namespace collbench {

RemoteBuffer local_buffer(const void* p) { return {static_cast<std::int64_t>(getpid()), p}; }

namespace {

// Moves `bytes` between this process's `local` and [remote, + bytes) of process `pid`, however
// many system calls that takes (the kernel may copy less than asked). `call` is process_vm_readv
// or process_vm_writev, which take the same arguments.
template <class Call>
int kernel_move(Call call, std::int64_t pid, std::byte* local, std::byte* remote, std::size_t bytes) noexcept {
  while (bytes > 0) {
    iovec l{local, bytes};
    iovec r{remote, bytes};
    const ssize_t moved = call(static_cast<pid_t>(pid), &l, 1, &r, 1, 0);
    if (moved < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (moved == 0) return EFAULT;  // nothing copied and no error: never loop forever
    local += moved;
    remote += moved;
    bytes -= static_cast<std::size_t>(moved);
  }
  return 0;
}

// The iovec type is not const, though only one side is written.
std::byte* iov_address(const void* p, std::size_t offset) {
  return const_cast<std::byte*>(static_cast<const std::byte*>(p)) + offset;
}

}  // namespace

int kernel_read(const RemoteBuffer& src, std::size_t offset, void* dst, std::size_t bytes) noexcept {
  return kernel_move(process_vm_readv, src.pid, static_cast<std::byte*>(dst), iov_address(src.address, offset), bytes);
}

int kernel_write(const RemoteBuffer& dst, std::size_t offset, const void* src, std::size_t bytes) noexcept {
  return kernel_move(process_vm_writev, dst.pid, iov_address(src, 0), iov_address(dst.address, offset), bytes);
}

}  // namespace collbench
