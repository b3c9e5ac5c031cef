// Votes kept in 32 bits, used as a block uses them: compaction (kept values as a set, and
// their count), the first and last voting thread of the block, the number of voters, whether
// each lane finds its own vote. Not run: votes_per_warp, whose output is warp 0's raw ballot
// (a value as wide as the warp by definition). The driver's own bit counts
// are 64-bit (`__popcll`), so they take whatever the helpers return.
#include "driver.h"
#include LANES_FIXTURE

#include <algorithm>

enum Use { FIRST, LAST, COUNT, OWN_VOTE };

// One block-wide answer from each helper: the first or last voting thread, the number of
// voters, how many lanes do not find their own vote.
__global__ void block_answer(const int* flags, int* answer, int use) {
  const bool p = flags[threadIdx.x] != 0;
  const int base = threadIdx.x / warpSize * warpSize;
  const int lane = threadIdx.x % warpSize;
  if (use == FIRST) {
    const int f = first_voter(p);
    if (lane == 0 && f >= 0) atomicMin(answer, base + f);
  } else if (use == LAST) {
    const int l = last_voter(p);
    if (lane == 0 && l >= 0) atomicMax(answer, base + l);
  } else if (use == COUNT) {
    const int n = __popcll(voters(p));
    if (lane == 0) atomicAdd(answer, n);
  } else if (lane_voted(p, lane) != p) {
    atomicAdd(answer, 1);
  }
}

__global__ void compact_by_rank(const int* flags, int* out, int* count) {
  const bool p = flags[threadIdx.x] != 0;
  const int lane = threadIdx.x % warpSize;
  const int n = __popcll(voters(p));
  const int rank = voters_below(p, lane);
  int base = 0;
  if (lane == 0) base = atomicAdd(count, n);
  base = __shfl(base, 0);
  if (p) out[base + rank] = threadIdx.x;
}

static int* flags() {
  return input<int>(128, [](long long i) { return i >= 40 && i % 3 == 0; });
}

void drive() {
  STEP("compact") {
    float* in = input<float>(256, [](long long i) { return (i * 13) % 7 > 3 ? static_cast<float>(i) : -1.f; });
    float* out = alloc<float>(256);
    int* count = alloc<int>(1);
    launch(compact, dim3(2), dim3(128), 0, in, out, count, 250);
    std::sort(out, out + 256);
    record("kept", out, 256);
    record("count", count, 1);
  }
  const char* names[] = {"first_voter", "last_voter", "voters", "lane_voted"};
  const int starts[] = {1 << 30, -1, 0, 0};
  for (int use = FIRST; use <= OWN_VOTE; ++use) {
    STEP(names[use]) {
      int* answer = input<int>(1, [&](long long) { return starts[use]; });
      launch(block_answer, dim3(1), dim3(128), 0, flags(), answer, use);
      record("answer", answer, 1);
    }
  }
  STEP("compact_by_rank") {
    int* out = input<int>(128, [](long long) { return -1; });
    int* count = alloc<int>(1);
    launch(compact_by_rank, dim3(1), dim3(128), 0, flags(), out, count);
    std::sort(out, out + 128);
    record("kept", out, 128);
    record("count", count, 1);
  }
}
