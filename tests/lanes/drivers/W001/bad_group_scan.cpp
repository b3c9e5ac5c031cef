// row_max as a two-level reduction uses it: each warp of a 256-thread block reduces its part
// of a 128-wide row, the first warp takes one partial per lane and combines the partials of
// each row (`reduce_width` lanes of warps), then reads each row's maximum from its first
// partial. Not run: scan_rows, whose output is a scan per warp (a value per warp by
// definition, whatever the warp's width).
#include "driver.h"
#include LANES_FIXTURE

__global__ void two_level_max(const float* in, float* row_out) {
  __shared__ float partial[256];
  float v = in[threadIdx.x];
  for (int o = warpSize / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor(v, o));
  const int warps = blockDim.x / warpSize, per_row = 128 / warpSize;
  if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = v;
  __syncthreads();
  if (threadIdx.x < warpSize) {
    cg::thread_block_tile<kWarpLanes> g = cg::tiled_partition<kWarpLanes>(cg::this_thread_block());
    float p = threadIdx.x < warps ? partial[threadIdx.x] : -1e30f;
    p = row_max(g, p, 128);
    if (threadIdx.x < warps && threadIdx.x % per_row == 0) row_out[threadIdx.x / per_row] = p;
  }
}

void drive() {
  STEP("row_max") {
    float* v = input<float>(256, [](long long i) { return static_cast<float>((i * 29) % 97 + (i >= 128 ? 1000 : 0)); });
    float* rows = alloc<float>(2);
    launch(two_level_max, dim3(1), dim3(256), 0, v, rows);
    record("row_max", rows, 2);
  }
}
