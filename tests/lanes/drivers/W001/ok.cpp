// The near-misses as a program uses them: bits set per word, a 32-wide segment sum, and
// block totals built from the wavefront-wide reductions (lane 0 of each warp contributes).
// per_head is not launched: its threads add into shared words without atomics (a race).
#include "driver.h"
#include LANES_FIXTURE

__global__ void block_totals(const float* in, float* segments, float* sum, float* max_per_thread) {
  const float v = in[threadIdx.x];
  segments[threadIdx.x] = segment_sum(v) + tile_value(in);
  const float s = wave_sum(v);
  const float m = wave_max(v);
  if (threadIdx.x % warpSize == 0) atomicAdd(sum, s);
  max_per_thread[threadIdx.x] = m;
}

void drive() {
  STEP("set_bits") {
    int* flags = input<int>(200, [](long long i) { return i % 3 == 0; });
    unsigned* bits = alloc<unsigned>(8);
    launch(set_bits, dim3(2), dim3(128), 0, flags, bits, 200);
    record("bits", bits, 8);
  }
  STEP("block_totals") {
    float* in = input<float>(128, [](long long i) { return static_cast<float>((i * 11) % 23); });
    float* segments = alloc<float>(128);
    float* sum = alloc<float>(1);
    float* max_per_thread = alloc<float>(128);
    launch(block_totals, dim3(1), dim3(128), 0, in, segments, sum, max_per_thread);
    record("segment_sum", segments, 128);
    record("block_sum", sum, 1);
    float block_max = max_per_thread[0];
    for (int i = 1; i < 128; ++i) block_max = max_per_thread[i] > block_max ? max_per_thread[i] : block_max;
    record("block_max", &block_max, 1);
  }
}
