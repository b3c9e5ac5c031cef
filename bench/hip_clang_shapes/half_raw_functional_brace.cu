#include <cuda_runtime.h>
#include <cuda_fp16.h>
__device__ __half from_bits(unsigned short b) { return __half(__half_raw{b}); }
__global__ void k(__half* out, const unsigned short* bits) { out[0] = from_bits(bits[0]); }
