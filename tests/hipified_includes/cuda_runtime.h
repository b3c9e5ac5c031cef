// hipify rewrites `#include <cuda_runtime.h>` to `#include <hip/hip_runtime.h>`; a fixture written for CUDA
// sees the HIP header through this file when hipcc compiles it unchanged.
#pragma once
#include <hip/hip_runtime.h>
