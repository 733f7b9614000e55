#pragma once
// The kernel's single copy between processes of one node: Linux's cross-memory attach
// (process_vm_readv), as Open MPI's vader and MPICH's nemesis LMT use for large messages. A
// rank reads a peer's user buffer straight into its own (or writes its own into a peer's,
// process_vm_writev), one copy, without either buffer in shared memory, where a staged copy
// writes the peer's bytes into peer memory first and the reader then loads lines another core
// has just written. Ranks that are threads of one process read it too (their pid is the same).
// Needs ptrace-attach rights over the peer (the same user, and Yama's ptrace_scope at 0): where
// they are missing the read fails with EPERM, and schedules::peer::measure_kernel_copy finds it
// unavailable.
#include <cstddef>
#include <cstdint>

namespace collbench {

// A buffer in some process of this node, as a peer posts it for readers.
struct RemoteBuffer {
  std::int64_t pid = 0;
  const void* address = nullptr;
};
RemoteBuffer local_buffer(const void* p);  // this process's p

// Copies [src.address + offset, + bytes) of src's process into dst, however many system calls
// that takes (the kernel may copy less than asked). Returns 0, or the errno of the failed call
// (EPERM: no rights; ESRCH: no such process; EFAULT: not mapped there).
int kernel_read(const RemoteBuffer& src, std::size_t offset, void* dst, std::size_t bytes) noexcept;
// The other way (process_vm_writev): src into [dst.address + offset, + bytes) of dst's process.
int kernel_write(const RemoteBuffer& dst, std::size_t offset, const void* src, std::size_t bytes) noexcept;

}  // namespace collbench
