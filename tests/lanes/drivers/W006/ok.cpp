// Sub-warp tiles: strided writes by 8-thread tile ranks, quad sums. Not run: quads and
// parented, whose outputs add the rank in the platform's warp tile (lane % 32 or lane % 64
// by design).
#include "driver.h"
#include LANES_FIXTURE

__global__ void quad_sums(const float* in, float* out) {
  cg::thread_block_tile<4, cg::thread_block> quad = cg::tiled_partition<4>(cg::this_thread_block());
  out[threadIdx.x] = quad_sum(quad, in[threadIdx.x]);
}

void drive() {
  STEP("strided") {
    float* data = alloc<float>(128 * 32);
    launch(strided, dim3(1), dim3(128), 0, data);
    record("data", data, 128 * 32);
  }
  STEP("quad_sum") {
    float* in = input<float>(128, [](long long i) { return static_cast<float>(i % 9); });
    float* out = alloc<float>(128);
    launch(quad_sums, dim3(1), dim3(128), 0, in, out);
    record("out", out, 128);
  }
}
