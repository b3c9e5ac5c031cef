// Block sums, per-warp scan totals, row softmax and an unrolled warp minimum, as a caller
// reads them (the minimum: lane 0 of each warp holds its warp's minimum, the block's is the
// least of those).
#include "driver.h"
#include LANES_FIXTURE

__global__ void warp_min_kernel(const float* in, float* out) {
  const float m = warp_min(in[threadIdx.x]);
  out[threadIdx.x] = threadIdx.x % warpSize == 0 ? m : INFINITY;
}

static float* data() {
  return input<float>(512, [](long long i) { return static_cast<float>((i * 37) % 101) - 50.f; });
}

void drive() {
  STEP("block_reduce_sum") {
    float* sums = alloc<float>(2);
    launch(block_reduce_sum, dim3(2), dim3(256), 0, data(), sums, 500);
    record("sums", sums, 2);
  }
  STEP("block_scan_totals") {
    // The warps' totals add up to the block's total.
    float* totals = alloc<float>(4);
    launch(block_scan_totals, dim3(1), dim3(128), 0, data(), totals);
    float block_total = totals[0] + totals[1] + totals[2] + totals[3];
    record("block_total", &block_total, 1);
  }
  STEP("softmax_rows") {
    const int rows = 4, cols = 40;
    float* x = input<float>(rows * cols, [](long long i) { return static_cast<float>(i % 13) * 0.25f; });
    float* y = alloc<float>(rows * cols);
    launch(softmax_rows, dim3(1), dim3(rows * 32), 0, x, y, rows, cols);
    record("y", y, rows * cols);
  }
  STEP("warp_min") {
    float* in = input<float>(128, [](long long i) { return static_cast<float>(200 - (i * 7) % 150); });
    float* mins = alloc<float>(128);
    launch(warp_min_kernel, dim3(1), dim3(128), 0, in, mins);
    float block_min = INFINITY;
    for (int i = 0; i < 128; ++i) block_min = mins[i] < block_min ? mins[i] : block_min;
    record("block_min", &block_min, 1);
  }
}
