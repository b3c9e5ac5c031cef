// Per-warp slots read by counts of 32-lane warps, as the kernels read them. The inputs give
// lane 0 of every other 32 lanes a zero, so the warps' first values add up the same on any
// warp size and only slots no warp wrote can tell. Not run: block_min, whose slots are sized
// for 64-lane wavefronts and overflow on 32 lanes: CUDA is the broken side there, and the
// harness takes the 32-lane run as the reference.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("block_sum") {
    float* in = input<float>(512, [](long long i) { return static_cast<float>(i % 13); });
    float* out = alloc<float>(2);
    launch(block_sum, dim3(2), dim3(BLOCK_SIZE), 0, in, out);
    record("sums", out, 2);
  }
  STEP("block_max") {
    float* in = input<float>(kThreads, [](long long i) { return static_cast<float>((i * 31) % 97); });
    float* out = input<float>(kThreads, [](long long) { return -5.f; });
    launch(block_max, dim3(1), dim3(kThreads), 0, in, out);
    record("out", out, kThreads);
  }
  STEP("block_count") {
    // 1024 threads: 32 warps of 32 write every slot on CUDA; 16 wavefronts leave half unwritten.
    int* in = input<int>(1024, [](long long i) { return i % 64 == 0 ? static_cast<int>(i / 64 + 1) : 0; });
    int* out = alloc<int>(1);
    launch(block_count, dim3(1), dim3(1024), 0, in, out);
    record("total", out, 1);
  }
}
