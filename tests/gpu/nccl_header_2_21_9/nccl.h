// Test fixture: only the version lines of an NCCL 2.21.9 nccl.h (cmake/NcclVersion.cmake).
#define NCCL_MAJOR 2
#define NCCL_MINOR 21
#define NCCL_PATCH 9
