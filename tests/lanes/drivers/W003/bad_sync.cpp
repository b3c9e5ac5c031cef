// The first active thread of a branch, and a compaction by rank among a warp's voters, as a
// block uses them. Not run: group_size and reversed_votes, whose results are bits or counts
// of the caller's own warp (as wide as the warp by definition).
#include "driver.h"
#include LANES_FIXTURE

#include <algorithm>

__global__ void first_in_branch(int* first) {
  if (threadIdx.x % 64 >= 40) {
    const int t = threadIdx.x / warpSize * warpSize + first_active_lane();
    atomicMin(first, t);
  }
}

__global__ void compact_by_rank(const int* flags, int* out, int* count) {
  const bool p = flags[threadIdx.x] != 0;
  const int n = __popcll(__ballot_sync(~0ull, p));
  const int rank = rank_in_warp(p, 0);
  int base = 0;
  if (threadIdx.x % warpSize == 0) base = atomicAdd(count, n);
  base = __shfl_sync(~0ull, base, 0);
  if (p) out[base + rank] = threadIdx.x;
}

void drive() {
  STEP("first_active_lane") {
    int* first = input<int>(1, [](long long) { return 1 << 30; });
    launch(first_in_branch, dim3(1), dim3(128), 0, first);
    record("first", first, 1);
  }
  STEP("rank_in_warp") {
    int* flags = input<int>(128, [](long long i) { return i % 5 == 1 || (i > 90 && i < 100); });
    int* out = input<int>(128, [](long long) { return -1; });
    int* count = alloc<int>(1);
    launch(compact_by_rank, dim3(1), dim3(128), 0, flags, out, count);
    std::sort(out, out + 128);
    record("kept", out, 128);
    record("count", count, 1);
  }
}
