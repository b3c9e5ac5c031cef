#include <cuda_runtime.h>
#include <cuda_fp16.h>
__device__ __half_raw raw_bits(unsigned short b) { return {b}; }
__global__ void k(__half* out, const unsigned short* bits) { out[0] = raw_bits(bits[0]); }
