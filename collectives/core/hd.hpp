#pragma once
// Marks code that must compile for both host and CUDA device, so element-wise arithmetic
// is written once and tested on the CPU (issue: GPU path shares the host's arithmetic).
#if defined(__CUDACC__)
#define CB_HD __host__ __device__
#define CB_HD_INLINE __host__ __device__ __forceinline__
#else
#define CB_HD
#define CB_HD_INLINE inline
#endif
