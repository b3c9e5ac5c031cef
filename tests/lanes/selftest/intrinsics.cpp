// The emulator's own test kernels: tests/test_lanes_emulator.py runs this program with
// LANES_CASE=<name> and compares what it records with the semantics of CUDA's and HIP's
// documents, computed in Python. Cases named fault_* must end in a report, not a result.
#include "driver.h"

#include <cstring>
#include <string>

typedef lanes::lane_mask_t mask_t;
constexpr mask_t kFull = static_cast<mask_t>(lanes::kFullMask);

// ---- shuffles: every kind, width and operand the test lists --------------------------------
enum Shuffle { IDX, UP, DOWN, XOR, IDX_SYNC, UP_SYNC, DOWN_SYNC, XOR_SYNC };

__global__ void shuffle_kernel(const int* in, int* out, int kind, int arg, int width) {
  const int v = in[threadIdx.x];
  int r = 0;
  switch (kind) {
    case IDX: r = width ? __shfl(v, arg, width) : __shfl(v, arg); break;
    case UP: r = width ? __shfl_up(v, arg, width) : __shfl_up(v, arg); break;
    case DOWN: r = width ? __shfl_down(v, arg, width) : __shfl_down(v, arg); break;
    case XOR: r = width ? __shfl_xor(v, arg, width) : __shfl_xor(v, arg); break;
    case IDX_SYNC: r = width ? __shfl_sync(kFull, v, arg, width) : __shfl_sync(kFull, v, arg); break;
    case UP_SYNC: r = width ? __shfl_up_sync(kFull, v, arg, width) : __shfl_up_sync(kFull, v, arg); break;
    case DOWN_SYNC: r = width ? __shfl_down_sync(kFull, v, arg, width) : __shfl_down_sync(kFull, v, arg); break;
    case XOR_SYNC: r = width ? __shfl_xor_sync(kFull, v, arg, width) : __shfl_xor_sync(kFull, v, arg); break;
  }
  out[threadIdx.x] = r;
}

// A double moves whole through a shuffle.
__global__ void shuffle_double(const double* in, double* out) { out[threadIdx.x] = __shfl_xor(in[threadIdx.x], 1); }

// ---- votes ----------------------------------------------------------------------------------
__global__ void votes(const int* pred, unsigned long long* ballot, int* any, int* all, unsigned long long* ballot_sync,
                      int* any_sync, int* all_sync) {
  const int p = pred[threadIdx.x];
  ballot[threadIdx.x] = __ballot(p);
  any[threadIdx.x] = __any(p);
  all[threadIdx.x] = __all(p);
  ballot_sync[threadIdx.x] = __ballot_sync(kFull, p);
  any_sync[threadIdx.x] = __any_sync(kFull, p);
  all_sync[threadIdx.x] = __all_sync(kFull, p);
}

// A `_sync` vote whose mask names exactly the lanes of a branch: lanes below 16 of each warp.
__global__ void partial_mask_ballot(const int* pred, unsigned long long* out) {
  const unsigned lane = threadIdx.x % warpSize;
  out[threadIdx.x] = 0;
  if (lane < 16) out[threadIdx.x] = __ballot_sync(static_cast<mask_t>(0xffff), pred[threadIdx.x]);
}

// Lanes split by a branch see only their side as active.
__global__ void active_in_branches(unsigned long long* out) {
  if (threadIdx.x % 2) {
    out[threadIdx.x] = __activemask();
  } else {
    out[threadIdx.x] = __activemask();
  }
}

__global__ void match(const int* keys, unsigned long long* any, unsigned long long* all, int* all_pred) {
  const int k = keys[threadIdx.x];
  any[threadIdx.x] = __match_any_sync(kFull, k);
  int pred = -1;
  all[threadIdx.x] = __match_all_sync(kFull, k, &pred);
  all_pred[threadIdx.x] = pred;
}

// ---- bit functions (host and device alike) ----------------------------------------------------
__global__ void bits(const unsigned long long* in, long long* out, int n) {
  for (int i = 0; i < n; ++i) {
    const unsigned long long x = in[i];
    long long* o = out + 8 * i;
    o[0] = __popc(static_cast<unsigned>(x));
    o[1] = __popcll(x);
    o[2] = __ffs(static_cast<int>(x));
    o[3] = __ffsll(static_cast<long long>(x));
    o[4] = __clz(static_cast<int>(x));
    o[5] = __clzll(static_cast<long long>(x));
    o[6] = __brev(static_cast<unsigned>(x));
    o[7] = static_cast<long long>(__brevll(x));
  }
}

// ---- cooperative groups ---------------------------------------------------------------------
namespace cg = cooperative_groups;

__global__ void tiles16(const int* in, int* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
  const int v = in[threadIdx.x];
  int* o = out + 10 * threadIdx.x;
  o[0] = tile.shfl(v, 3);
  o[1] = tile.shfl_down(v, 1);
  o[2] = tile.shfl_up(v, 2);
  o[3] = tile.shfl_xor(v, 4);
  o[4] = static_cast<int>(tile.ballot(v % 3 == 0));
  o[5] = tile.any(v % 7 == 0);
  o[6] = tile.all(v >= 0);
  o[7] = tile.thread_rank();
  o[8] = tile.size();
  o[9] = tile.meta_group_rank();
  tile.sync();
}

__global__ void coalesced(const int* in, int* out) {
  out[3 * threadIdx.x] = out[3 * threadIdx.x + 1] = out[3 * threadIdx.x + 2] = -1;
  if (threadIdx.x % 3 == 0) {
    cg::coalesced_group active = cg::coalesced_threads();
    out[3 * threadIdx.x] = active.size();
    out[3 * threadIdx.x + 1] = active.thread_rank();
    out[3 * threadIdx.x + 2] = active.shfl(in[threadIdx.x], 0);
  }
}

// ---- blocks, barriers, shared memory ------------------------------------------------------
__global__ void reverse_block(const int* in, int* out) {
  __shared__ int s[256];
  s[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

__global__ void dynamic_reverse(const int* in, int* out) {
  int* s = lanes::dynamic_shared<int>();
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

__global__ void coordinates(int* out) {
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int b = blockIdx.x + gridDim.x * blockIdx.y;
  int* o = out + 6 * (b * blockDim.x * blockDim.y * blockDim.z + t);
  o[0] = threadIdx.x;
  o[1] = threadIdx.y;
  o[2] = threadIdx.z;
  o[3] = b;
  o[4] = __lane_id();
  o[5] = __shfl(t, 0);  // lane 0 of the thread's warp: warps take consecutive linear indices
}

// Shared memory no thread wrote reads as 0xff bytes, in every block.
__global__ void shared_poison(int* out) {
  __shared__ int s[4];
  if (threadIdx.x == 0) {
    s[0] = 5 + blockIdx.x;
    if (blockIdx.x == 0) s[1] = 9;  // the next block must not see it
  }
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x % 4];
}

// ---- kernels that must be reported ---------------------------------------------------------
__global__ void fault_divergent_shuffle(int* out) {
  int v = threadIdx.x;
  if (threadIdx.x % warpSize < 16) v = __shfl_down(v, 1);  // lane 15 reads lane 16, not in the branch
  out[threadIdx.x] = v;
}
__global__ void fault_width(int* out) { out[threadIdx.x] = __shfl_xor(static_cast<int>(threadIdx.x), 1, 48); }
__global__ void fault_width_64(int* out) { out[threadIdx.x] = __shfl_xor(static_cast<int>(threadIdx.x), 1, 64); }
__global__ void fault_mask_excludes(int* out) {
  out[threadIdx.x] = __shfl_sync(static_cast<mask_t>(1), static_cast<int>(threadIdx.x), 0);
}
__global__ void fault_32_bit_mask(int* out) {
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, static_cast<int>(threadIdx.x), 1);
}
__global__ void fault_barrier_sites(int* out) {
  if (threadIdx.x < 64) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = 1;
}
__global__ void fault_barrier_vs_warp(int* out) {
  int v = threadIdx.x;
  if (threadIdx.x % warpSize < 16) v = __shfl_sync(kFull, v, 0);
  __syncthreads();
  out[threadIdx.x] = v;
}
__global__ void fault_spin(int* flag) {
  if (threadIdx.x == 0) {
    __syncthreads();
    atomicExch(flag, 1);
  } else {
    while (atomicAdd(flag, 0) == 0) {
    }
  }
}
// __syncwarp in both arms of a branch: CUDA lets the arms meet at different __syncwarp calls;
// HIP's wavefront runs one arm after the other, so the full mask names lanes of the other arm.
__global__ void fault_syncwarp_in_both_arms(int* out) {
  __shared__ int s[128];
  const int lane = threadIdx.x % warpSize;
  if (lane % 2 == 0) {
    s[threadIdx.x] = lane;
    __syncwarp(kFull);
  } else {
    __syncwarp(kFull);
    s[threadIdx.x] = s[threadIdx.x - 1] + 100;
  }
  out[threadIdx.x] = s[threadIdx.x];
}
__global__ void fault_tile_wider_than_warp(int* out) {
  cg::thread_block block = cg::this_thread_block();
  auto tile = cg::tiled_partition<64>(block);
  out[threadIdx.x] = tile.shfl(static_cast<int>(threadIdx.x), 0);
}

// ---- selection --------------------------------------------------------------------------
static const int kThreads = 128;

static int* iota_input() {
  return input<int>(kThreads, [](long long i) { return static_cast<int>(i * 3 + 1); });
}

void drive() {
  const char* name = std::getenv("LANES_CASE");
  const std::string c = name ? name : "";
  if (c == "shuffle") {
    // LANES_SHUFFLE="kind arg width;...": shuffles over two full warps (128 threads), each
    // recorded as out<i>.
    const char* spec = std::getenv("LANES_SHUFFLE");
    int kind = 0, arg = 0, width = 0, used = 0;
    for (int i = 0; std::sscanf(spec, "%d %d %d;%n", &kind, &arg, &width, &used) == 3; ++i, spec += used) {
      int* out = alloc<int>(kThreads);
      launch(shuffle_kernel, dim3(1), dim3(kThreads), 0, iota_input(), out, kind, arg, width);
      record(("out" + std::to_string(i)).c_str(), out, kThreads);
    }
  } else if (c == "shuffle_double") {
    double* in = input<double>(kThreads, [](long long i) { return 1.0 / (i + 3) + 1e10 * i; });
    double* out = alloc<double>(kThreads);
    launch(shuffle_double, dim3(1), dim3(kThreads), 0, in, out);
    record("in", in, kThreads);
    record("out", out, kThreads);
  } else if (c == "votes") {
    int* pred = input<int>(kThreads, [](long long i) { return (i % 3 == 0) || (i >= 64 && i < 96); });
    auto* ballot = alloc<unsigned long long>(kThreads);
    auto* ballot_sync = alloc<unsigned long long>(kThreads);
    int *any = alloc<int>(kThreads), *all = alloc<int>(kThreads), *any_sync = alloc<int>(kThreads),
        *all_sync = alloc<int>(kThreads);
    launch(votes, dim3(1), dim3(kThreads), 0, pred, ballot, any, all, ballot_sync, any_sync, all_sync);
    record("pred", pred, kThreads);
    record("ballot", ballot, kThreads);
    record("any", any, kThreads);
    record("all", all, kThreads);
    record("ballot_sync", ballot_sync, kThreads);
    record("any_sync", any_sync, kThreads);
    record("all_sync", all_sync, kThreads);
  } else if (c == "partial_mask_ballot") {
    int* pred = input<int>(kThreads, [](long long i) { return i % 5 < 2; });
    auto* out = alloc<unsigned long long>(kThreads);
    launch(partial_mask_ballot, dim3(1), dim3(kThreads), 0, pred, out);
    record("pred", pred, kThreads);
    record("out", out, kThreads);
  } else if (c == "active_in_branches") {
    auto* out = alloc<unsigned long long>(kThreads);
    launch(active_in_branches, dim3(1), dim3(kThreads), 0, out);
    record("out", out, kThreads);
  } else if (c == "match") {
    int* keys = input<int>(kThreads, [](long long i) { return i < 64 ? static_cast<int>(i % 5) : 7; });
    auto *any = alloc<unsigned long long>(kThreads), *all = alloc<unsigned long long>(kThreads);
    int* pred = alloc<int>(kThreads);
    launch(match, dim3(1), dim3(kThreads), 0, keys, any, all, pred);
    record("keys", keys, kThreads);
    record("any", any, kThreads);
    record("all", all, kThreads);
    record("all_pred", pred, kThreads);
  } else if (c == "bits") {
    const unsigned long long values[] = {0ull, 1ull, 0x80000000ull, 0xffffffffull, 0x100000000ull, 0xf0f0f0f000000000ull,
                                         ~0ull, 0x12345678ull, 0x8000000000000000ull};
    const int n = sizeof values / sizeof values[0];
    auto* in = input<unsigned long long>(n, [&](long long i) { return values[i]; });
    long long* out = alloc<long long>(8 * n);
    launch(bits, dim3(1), dim3(1), 0, in, out, n);
    record("in", in, n);
    record("out", out, 8 * n);
  } else if (c == "tiles16") {
    int* out = alloc<int>(10 * kThreads);
    launch(tiles16, dim3(1), dim3(kThreads), 0, iota_input(), out);
    record("out", out, 10 * kThreads);
  } else if (c == "coalesced") {
    int* out = alloc<int>(3 * kThreads);
    launch(coalesced, dim3(1), dim3(kThreads), 0, iota_input(), out);
    record("out", out, 3 * kThreads);
  } else if (c == "reverse_block") {
    int* in = input<int>(3 * 256, [](long long i) { return static_cast<int>(i * i % 1009); });
    int* out = alloc<int>(3 * 256);
    launch(reverse_block, dim3(3), dim3(256), 0, in, out);
    record("in", in, 3 * 256);
    record("out", out, 3 * 256);
  } else if (c == "dynamic_reverse") {
    int* out = alloc<int>(96);
    launch(dynamic_reverse, dim3(1), dim3(96), 96 * sizeof(int), iota_input(), out);
    record("out", out, 96);
  } else if (c == "shared_poison") {
    int* out = alloc<int>(16);
    launch(shared_poison, dim3(2), dim3(8), 0, out);
    record("out", out, 16);
  } else if (c == "coordinates") {
    // dim3 blocks of 8 x 4 x 3 (96 threads: a partial last warp at 64 lanes), 2 x 2 blocks.
    int* out = alloc<int>(6 * 96 * 4);
    launch(coordinates, dim3(2, 2), dim3(8, 4, 3), 0, out);
    record("out", out, 6 * 96 * 4);
  } else {
    int* out = alloc<int>(kThreads);
    if (c == "fault_divergent_shuffle") launch(fault_divergent_shuffle, dim3(1), dim3(kThreads), 0, out);
    if (c == "fault_width") launch(fault_width, dim3(1), dim3(kThreads), 0, out);
    if (c == "fault_width_64") launch(fault_width_64, dim3(1), dim3(kThreads), 0, out);
    if (c == "fault_mask_excludes") launch(fault_mask_excludes, dim3(1), dim3(kThreads), 0, out);
    if (c == "fault_32_bit_mask") launch(fault_32_bit_mask, dim3(1), dim3(kThreads), 0, out);
    if (c == "fault_barrier_sites") launch(fault_barrier_sites, dim3(1), dim3(kThreads), 0, out);
    if (c == "fault_barrier_vs_warp") launch(fault_barrier_vs_warp, dim3(1), dim3(kThreads), 0, out);
    if (c == "fault_spin") launch(fault_spin, dim3(1), dim3(kThreads), 0, out);
    if (c == "fault_syncwarp_in_both_arms") launch(fault_syncwarp_in_both_arms, dim3(1), dim3(kThreads), 0, out);
    if (c == "fault_tile_wider_than_warp") launch(fault_tile_wider_than_warp, dim3(1), dim3(kThreads), 0, out);
    record("out", out, kThreads);
  }
}
