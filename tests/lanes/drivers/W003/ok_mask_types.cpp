// The 64-bit masks and tile votes as a block uses them: a tile's votes (relative to the tile),
// and a sum over 16 lanes read from the first lane of each 32. Not run: votes and
// shuffled_index, whose results are counts or lanes of the caller's own warp.
#include "driver.h"
#include LANES_FIXTURE

__global__ void use(const int* flags, unsigned* tile_counts, float* sums) {
  const bool p = flags[threadIdx.x] != 0;
  tile_counts[threadIdx.x] = tile_votes(p);
  const float s = sum_in_mask(~0ull, 8u, static_cast<float>(threadIdx.x % 13));
  if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = s;
}

void drive() {
  STEP("tile_votes_and_sums") {
    int* flags = input<int>(128, [](long long i) { return i % 3 == 0; });
    unsigned* counts = alloc<unsigned>(128);
    float* sums = alloc<float>(4);
    launch(use, dim3(1), dim3(128), 0, flags, counts, sums);
    record("tile_counts", counts, 128);
    record("sums", sums, 4);
  }
}
