// hipify rewrites `#include <cooperative_groups.h>` to `#include <hip/hip_cooperative_groups.h>`; a fixture written for CUDA
// sees the HIP header through this file when hipcc compiles it unchanged.
#pragma once
#include <hip/hip_cooperative_groups.h>
