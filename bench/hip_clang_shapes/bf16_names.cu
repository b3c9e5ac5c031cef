#include <cuda_runtime.h>
#include <cuda_bf16.h>
__global__ void k(__nv_bfloat16* out, float v) { out[0] = __float2bfloat16(v); }
