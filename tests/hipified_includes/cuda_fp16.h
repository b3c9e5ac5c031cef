// hipify rewrites `#include <cuda_fp16.h>` to `#include <hip/hip_fp16.h>`; a fixture written for CUDA
// sees the HIP header through this file when hipcc compiles it unchanged.
#pragma once
#include <hip/hip_fp16.h>
