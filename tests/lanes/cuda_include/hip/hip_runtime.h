// <hip/hip_runtime.h> for an NVIDIA build of a hipified fixture (bench/gpu_check.py): HIP's
// names on CUDA, as HIP's own NVIDIA headers define them (mask-less warp functions are their
// `_sync` forms with the full mask).
#pragma once
// CUDA's own headers first: the macros below must not rewrite them.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cstdint>

#define __shfl(...) __shfl_sync(0xffffffffu, __VA_ARGS__)
#define __shfl_up(...) __shfl_up_sync(0xffffffffu, __VA_ARGS__)
#define __shfl_down(...) __shfl_down_sync(0xffffffffu, __VA_ARGS__)
#define __shfl_xor(...) __shfl_xor_sync(0xffffffffu, __VA_ARGS__)
#define __ballot(p) __ballot_sync(0xffffffffu, (p))
#define __any(p) __any_sync(0xffffffffu, (p))
#define __all(p) __all_sync(0xffffffffu, (p))

__device__ inline unsigned __lane_id() { return threadIdx.x % warpSize; }

typedef cudaStream_t hipStream_t;
typedef cudaError_t hipError_t;
typedef cudaDeviceProp hipDeviceProp_t;
#define hipDeviceAttributeWarpSize cudaDevAttrWarpSize
#define hipDeviceAttributeMaxThreadsPerBlock cudaDevAttrMaxThreadsPerBlock
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipLaunchKernelGGL(kernel, grid, block, shared, stream, ...) \
  kernel<<<(grid), (block), (shared), (stream)>>>(__VA_ARGS__)
