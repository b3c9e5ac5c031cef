// A lane-accurate CPU emulator for CUDA/HIP kernels, compiled with the host g++ (C++17).
//
// Build a kernel source with -DLANES_WARP_SIZE=32 (CUDA semantics) or 64 (HIP on a 64-lane
// CDNA wavefront), -O0 -fno-omit-frame-pointer, and -I tests/lanes/emulated_include so that
// <hip/hip_runtime.h>, <cuda_runtime.h> and the cooperative-groups headers resolve here.
//
// Model
// - A launch runs its blocks one after another. A block's threads are fibers (ucontext), each
//   thread a lane: lane = linear thread index % warp size, warp = linear index / warp size
//   (CUDA Programming Guide, "Thread Hierarchy" and "SIMT Architecture": warps take
//   consecutive thread IDs, x fastest). A block whose size is not a multiple of the warp size
//   ends with a partial warp: its missing lanes are inactive.
// - Threads run until they reach a warp operation, a block barrier or their end; nothing else
//   switches, so runs are deterministic. When no thread of the block can run, the emulator
//   completes one warp operation whose lanes have all arrived, or releases the barrier.
// - Between warp operations a lane runs alone: lanes are not in lockstep there. Code that
//   relies on implicit warp synchrony through shared memory (volatile stores and loads, no
//   `__syncwarp`) is not judged by the emulator; its drivers leave such kernels out.
// - Which lanes take part in a warp operation:
//   * CUDA (32): a `_sync` operation takes exactly the lanes named in its mask; it completes
//     when every one of them waits at the same operation with the same mask (Programming
//     Guide, "Warp Shuffle Functions" / "Warp Vote Functions": "all non-exited threads named
//     in mask must execute the same intrinsic with the same mask, or the result is
//     undefined"). HIP's mask-less names (`__shfl`, `__ballot`, `__any`, `__all`) are, as in
//     HIP's NVIDIA headers, their `_sync` forms with the full mask 0xffffffff.
//   * HIP (64): a wavefront executes with an exec mask. The lanes of one operation are the
//     lanes converged at it: among the lanes waiting at warp operations, those at the earliest
//     point of the program (the smallest call chain of return addresses: at -O0 GCC lays a
//     branch's body before its join point, so the earliest point is the branch that runs
//     first, as the hardware's reconvergence does). `_sync` forms follow HIP's
//     amd_warp_sync_functions.h: the mask is a 64-bit value, `__shfl*_sync` shuffle over the
//     active lanes, `__ballot_sync` is `__ballot(p) & mask`, `__all_sync`/`__any_sync`
//     compare that ballot with the mask; and HIP's debug check (`__hip_check_mask`) holds:
//     "each active thread must have its own bit set in its own mask value" and "all threads
//     specified in the mask must execute the same operation with the same mask".
//   * `__activemask()` returns the lanes converged at the call in both modes.
// - What is reported instead of computed (stderr line `lanes: <kind>: ...`, distinct exit):
//     3 deadlock: no thread can run and no warp operation or barrier can complete (a
//       `__syncthreads` some thread never reaches while another waits at a warp operation,
//       a `_sync` mask naming a lane that waits elsewhere), or a spin that never ends;
//     4 undefined: a shuffle reads a lane that is inactive (exited, not in the block, or not
//       taking part: CUDA "if the target thread is inactive, the retrieved value is
//       undefined"; on AMD `ds_bpermute` reads an inactive lane's register), a width that is
//       not a power of two up to the warp size, barriers reached at different call sites;
//     5 mask: a lane executes a `_sync` operation whose mask excludes it (CUDA: undefined,
//       the calling thread must be in mask; HIP asserts it in debug builds), a mask of 0,
//       or (HIP) lanes named in the mask that do not execute the operation with that mask
//       (CUDA waits for them instead: a deadlock if they never come; exited lanes named in
//       a CUDA mask are not waited for, as the guide's "non-exited threads" says);
//     6 unsupported: something the emulator does not model (a tile wider than the warp).
//   HIP >= 6.2 also rejects a 32-bit mask *type* at compile time (static_assert "The mask
//   must be a 64-bit integer"); the emulator converts the mask's value instead, so a run
//   shows what the value does: 0xffffffff leaves lanes 32-63 out and is reported as 5.
//
// Shuffle lane arithmetic (both sources agree; only the default width differs: warpSize):
//   CUDA Programming Guide, "Warp Shuffle Functions"; HIP amd_warp_functions.h (`__shfl`,
//   `__shfl_up`, `__shfl_down`, `__shfl_xor` over `__builtin_amdgcn_ds_bpermute`); HIP docs
//   "Warp cross-lane functions".
//   idx:  source = (lane & ~(width-1)) + (srcLane & (width-1)): srcLane outside [0, width)
//         is taken modulo width, within the lane's own segment.
//   up:   source = lane - delta unless that leaves the segment: then the lane's own value.
//   down: source = lane + delta unless (lane % width) + delta >= width: own value.
//   xor:  source = lane ^ laneMask unless it lies at or past the end of the lane's segment
//         (a later segment or past the warp): own value. Earlier segments may be read.
//   Operands of 32 and more: CUDA's shfl.sync uses the operand's low five bits (PTX ISA
//   "shfl.sync": bval = b[4:0]; `__shfl_xor_sync(m, v, 32)` is the lane's own value, a delta
//   of 33 moves by 1); HIP uses the whole int, and ds_bpermute reads lane (index & 63), so
//   a negative xor operand can reach an earlier lane.
//   width must be a power of two, 1 <= width <= warpSize (CUDA: "width must have a value
//   which is a power of 2; results are undefined if width is not a power of 2, or is a
//   number greater than warpSize").
// Votes/ballot/match: Programming Guide "Warp Vote Functions", "Warp Match Functions",
//   "Warp Reduce"/"Active Mask Query"; HIP amd_warp_functions.h (`__ballot` returns 64 bits)
//   and amd_warp_sync_functions.h. Bit functions: CUDA Math API "Integer Intrinsics"
//   (`__popc`, `__popcll`, `__ffs`, `__ffsll`, `__clz`, `__clzll`, `__brev`, `__brevll`).
// Cooperative groups: Programming Guide "Cooperative Groups" (thread_block, tiled_partition,
//   thread_block_tile, coalesced_threads); HIP "Cooperative groups" (tiles up to the
//   wavefront size; `thread_block_tile::ballot` gives bits by rank in the tile).
#pragma once

#ifndef LANES_WARP_SIZE
#error "build with -DLANES_WARP_SIZE=32 (CUDA) or -DLANES_WARP_SIZE=64 (HIP, CDNA)"
#endif

#include <ucontext.h>

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#define LANES_EMULATOR 1
// The build the lane count stands for, as fixtures test it: 64 lanes is a HIP device
// compile for AMD (USE_ROCM: the project macro PyTorch-style ports define for ROCm builds),
// 32 lanes a CUDA device compile.
#if LANES_WARP_SIZE == 64
#define __GFX9__ 1  // CDNA (gfx90a): the 64-lane targets
#define __gfx90a__ 1
#define __HIP_PLATFORM_AMD__ 1
#define __HIP_DEVICE_COMPILE__ 1
#define __HIPCC__ 1
#define USE_ROCM 1
#else
#define __CUDA_ARCH__ 900
#endif

namespace lanes {

constexpr int kLanes = LANES_WARP_SIZE;
static_assert(kLanes == 32 || kLanes == 64, "a warp has 32 or 64 lanes");
constexpr bool kHip = kLanes == 64;
// What ballot, __activemask and match return: `unsigned` on CUDA, 64 bits on HIP.
using lane_mask_t = std::conditional_t<kHip, unsigned long long, unsigned>;
constexpr unsigned long long kFullMask = kHip ? ~0ull : 0xffffffffull;

enum Exit { kOk = 0, kUsage = 2, kDeadlock = 3, kUndefined = 4, kMask = 5, kUnsupported = 6 };

[[noreturn]] inline void report(Exit code, const char* fmt, ...) {
  static const char* const names[] = {"ok", "", "usage", "deadlock", "undefined", "mask", "unsupported"};
  std::fflush(stdout);
  std::fprintf(stderr, "lanes: %s: ", names[code]);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, " (%d lanes per warp)\n", kLanes);
  std::exit(code);
}

}  // namespace lanes

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
  unsigned x, y, z;
};
struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) int2 {
  int x, y;
};
struct alignas(16) int4 {
  int x, y, z, w;
};

namespace lanes {
namespace detail {

enum class Kind { Shfl, ShflUp, ShflDown, ShflXor, Any, All, Ballot, ActiveMask, MatchAny, MatchAll, SyncWarp };

inline const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Shfl: return "shfl";
    case Kind::ShflUp: return "shfl_up";
    case Kind::ShflDown: return "shfl_down";
    case Kind::ShflXor: return "shfl_xor";
    case Kind::Any: return "any";
    case Kind::All: return "all";
    case Kind::Ballot: return "ballot";
    case Kind::ActiveMask: return "activemask";
    case Kind::MatchAny: return "match_any";
    case Kind::MatchAll: return "match_all";
    case Kind::SyncWarp: return "syncwarp";
  }
  return "?";
}

// One lane's part in a warp operation.
struct Op {
  Kind kind = Kind::SyncWarp;
  bool has_mask = false;        // a `_sync` form (or a group's operation)
  unsigned long long mask = 0;  // lanes named by the mask (group: the group's lanes)
  bool group = false;           // a cooperative group's operation: the mask is the group's
  unsigned long long value = 0; // the lane's operand bits (shuffled value, predicate, key)
  long long arg = 0;            // srcLane, delta or laneMask
  int width = kLanes;
  unsigned long long result = 0;
  int pred = 0;                 // match_all's predicate out
};

enum class State { Runnable, AtWarpOp, AtBarrier, Exited };

constexpr size_t kStackBytes = 256 * 1024;

struct Thread {
  ucontext_t context;
  char* stack = nullptr;
  uint3 idx{};
  int linear = 0, warp = 0, lane = 0;
  State state = State::Runnable;
  Op op;
  std::vector<uintptr_t> site;  // call chain at the pending operation, outermost first
};

struct Block {
  std::vector<Thread> threads;
  int warps = 0;
  uint3 block_idx{};
  dim3 block_dim, grid_dim;
  std::vector<unsigned char> dynamic_shared;
};

inline Block*& block() {
  static Block* b = nullptr;
  return b;
}
inline Thread*& current() {
  static Thread* t = nullptr;
  return t;
}
inline ucontext_t& scheduler() {
  static ucontext_t s;
  return s;
}
inline unsigned long long& spin_budget() {
  static unsigned long long n = 0;
  return n;
}

inline Thread& self() {
  Thread* t = current();
  if (t == nullptr) report(kUsage, "a device function was called outside a kernel launch");
  return *t;
}

// The call chain of the running fiber, outermost frame first: frame pointers from this frame
// up to the fiber's entry. Only frames inside the fiber's own stack count.
__attribute__((noinline)) inline void capture_site(std::vector<uintptr_t>& out) {
  Thread& t = self();
  out.clear();
  char* lo = t.stack;
  char* hi = t.stack + kStackBytes;
  void** fp = static_cast<void**>(__builtin_frame_address(0));
  while (reinterpret_cast<char*>(fp) >= lo && reinterpret_cast<char*>(fp) + 2 * sizeof(void*) <= hi) {
    out.push_back(reinterpret_cast<uintptr_t>(fp[1]));
    void** next = static_cast<void**>(fp[0]);
    if (next <= fp) break;
    fp = next;
  }
  for (size_t i = 0, j = out.size(); i + 1 < j; ++i, --j) std::swap(out[i], out[j - 1]);
}

inline void yield_to_scheduler() {
  Thread& t = self();
  swapcontext(&t.context, &scheduler());
}

inline unsigned long long warp_op(Op op) {
  Thread& t = self();
  t.op = op;
  capture_site(t.site);
  t.state = State::AtWarpOp;
  yield_to_scheduler();
  return t.op.result;
}

inline void barrier() {
  Thread& t = self();
  capture_site(t.site);
  t.state = State::AtBarrier;
  yield_to_scheduler();
}

inline unsigned long long lane_bit(int lane) { return 1ull << lane; }

inline void describe_warp(const Block& b, int w, char* buf, size_t n) {
  size_t used = 0;
  for (const Thread& t : b.threads) {
    if (t.warp != w || used + 64 > n) continue;
    const char* what = t.state == State::Exited ? "exited"
                       : t.state == State::AtBarrier ? "__syncthreads"
                       : t.state == State::AtWarpOp ? kind_name(t.op.kind)
                                                    : "running";
    used += std::snprintf(buf + used, n - used, " %d:%s", t.lane, what);
    if (t.state == State::AtWarpOp && t.op.has_mask)
      used += std::snprintf(buf + used, n - used, "(mask %#llx)", t.op.mask);
  }
}

// Source lane of a shuffle, before the check that the source takes part.
inline int shuffle_source(const Op& op, int lane) {
  const int w = op.width;
  if (w < 1 || w > kLanes || (w & (w - 1)) != 0)
    report(kUndefined, "shuffle width %d is not a power of two in [1, %d] (lane %d)", w, kLanes, lane);
  const int base = lane & ~(w - 1);
  // CUDA: shfl.sync takes the lane or offset operand's low five bits (PTX ISA, "shfl.sync":
  // bval = b[4:0]). HIP computes with the whole int, and ds_bpermute addresses lane
  // (index & 63) (amd_warp_functions.h: `__builtin_amdgcn_ds_bpermute(index << 2, var)`).
  const long long arg = kHip ? op.arg : (op.arg & 31);
  switch (op.kind) {
    case Kind::Shfl: return base + static_cast<int>(arg & (w - 1));
    case Kind::ShflUp: {
      const long long src = lane - static_cast<long long>(static_cast<unsigned>(arg));
      return src < base ? lane : static_cast<int>(src);
    }
    case Kind::ShflDown: {
      const long long rel = (lane & (w - 1)) + static_cast<long long>(static_cast<unsigned>(arg));
      return rel >= w ? lane : lane + static_cast<int>(rel - (lane & (w - 1)));
    }
    case Kind::ShflXor: {
      const long long src = static_cast<long long>(lane) ^ static_cast<long long>(static_cast<int>(arg));
      return src >= base + w ? lane : static_cast<int>(src & (kLanes - 1));
    }
    default: return lane;
  }
}

// Complete one operation for `lanes` (bit set of the warp's lanes that take part).
inline void execute(Block& b, int w, unsigned long long lanes) {
  Thread* by_lane[64] = {};
  for (Thread& t : b.threads)
    if (t.warp == w) by_lane[t.lane] = &t;
  auto member = [&](int l) { return l >= 0 && l < kLanes && ((lanes >> l) & 1) && by_lane[l]; };
  int first = -1;
  for (int l = 0; l < kLanes; ++l)
    if (member(l)) { first = l; break; }
  const Kind kind = by_lane[first]->op.kind;
  unsigned long long ballot = 0;
  for (int l = 0; l < kLanes; ++l)
    if (member(l) && by_lane[l]->op.value) ballot |= lane_bit(l);
  std::vector<unsigned long long> results(kLanes, 0);
  std::vector<int> preds(kLanes, 0);
  for (int l = 0; l < kLanes; ++l) {
    if (!member(l)) continue;
    const Op& op = by_lane[l]->op;
    switch (kind) {
      case Kind::Shfl: case Kind::ShflUp: case Kind::ShflDown: case Kind::ShflXor: {
        const int src = shuffle_source(op, l);
        if (!member(src))
          report(kUndefined, "warp %d lane %d: %s reads lane %d, which is inactive (lanes taking part: %#llx)", w, l,
                 kind_name(kind), src, lanes);
        results[l] = by_lane[src]->op.value;
        break;
      }
      case Kind::Ballot: results[l] = ballot; break;
      case Kind::Any: results[l] = ballot != 0; break;
      case Kind::All: results[l] = ballot == lanes; break;
      case Kind::ActiveMask: results[l] = lanes; break;
      case Kind::MatchAny: {
        unsigned long long peers = 0;
        for (int k = 0; k < kLanes; ++k)
          if (member(k) && by_lane[k]->op.value == op.value) peers |= lane_bit(k);
        results[l] = peers;
        break;
      }
      case Kind::MatchAll: {
        bool same = true;
        for (int k = 0; k < kLanes; ++k)
          if (member(k) && by_lane[k]->op.value != op.value) same = false;
        results[l] = same ? lanes : 0;
        preds[l] = same;
        break;
      }
      case Kind::SyncWarp: break;
    }
  }
  for (int l = 0; l < kLanes; ++l) {
    if (!member(l)) continue;
    Thread& t = *by_lane[l];
    unsigned long long r = results[l];
    // HIP: `__ballot_sync(mask, p)` is `__ballot(p) & mask`, `__all_sync` compares it with the
    // mask, `__match_any_sync` is `__match_any(v) & mask` (amd_warp_sync_functions.h).
    if (kHip && t.op.has_mask && !t.op.group) {
      if (kind == Kind::Ballot || kind == Kind::MatchAny) r &= t.op.mask;
      if (kind == Kind::Any) r = (ballot & t.op.mask) != 0;
      if (kind == Kind::All) r = (ballot & t.op.mask) == t.op.mask;
    }
    t.op.result = r;
    t.op.pred = preds[l];
    t.state = State::Runnable;
  }
}

inline bool same_site(const Thread& a, const Thread& b) { return a.site == b.site; }

// CUDA: a `_sync` operation completes when all lanes of its mask wait at it with that mask.
inline bool resolve_cuda(Block& b, int w, Thread** by_lane) {
  for (int l = 0; l < kLanes; ++l) {
    Thread* t = by_lane[l];
    if (!t || t->state != State::AtWarpOp || !t->op.has_mask) continue;
    const unsigned long long m = t->op.mask & kFullMask;
    if (m == 0) report(kMask, "warp %d lane %d: %s with mask 0", w, l, kind_name(t->op.kind));
    if (!((m >> l) & 1))
      report(kMask, "warp %d lane %d: %s with mask %#llx, which excludes the calling lane", w, l,
             kind_name(t->op.kind), m);
    // "All non-exited threads named in mask": exited lanes, and lanes past the end of a
    // partial warp, are not waited for (and a shuffle that reads one is undefined).
    bool ready = true;
    unsigned long long lanes = 0;
    for (int k = 0; k < kLanes && ready; ++k) {
      Thread* u = by_lane[k];
      if (!((m >> k) & 1) || !u || u->state == State::Exited) continue;
      ready = u->state == State::AtWarpOp && u->op.has_mask && u->op.kind == t->op.kind &&
              (u->op.mask & kFullMask) == m;
      lanes |= lane_bit(k);
    }
    if (ready) {
      execute(b, w, lanes);
      return true;
    }
  }
  // Mask-less operations (`__activemask`): the lanes converged at the earliest point, once
  // no `_sync` operation before them waits.
  Thread* earliest = nullptr;
  for (int l = 0; l < kLanes; ++l) {
    Thread* t = by_lane[l];
    if (t && t->state == State::AtWarpOp && (!earliest || t->site < earliest->site)) earliest = t;
  }
  if (!earliest || earliest->op.has_mask) return false;
  unsigned long long lanes = 0;
  for (int l = 0; l < kLanes; ++l)
    if (by_lane[l] && by_lane[l]->state == State::AtWarpOp && same_site(*by_lane[l], *earliest)) lanes |= lane_bit(l);
  execute(b, w, lanes);
  return true;
}

// HIP: the lanes at the earliest point form the exec mask; `_sync` masks are checked.
inline bool resolve_hip(Block& b, int w, Thread** by_lane) {
  Thread* earliest = nullptr;
  for (int l = 0; l < kLanes; ++l) {
    Thread* t = by_lane[l];
    if (t && t->state == State::AtWarpOp && (!earliest || t->site < earliest->site)) earliest = t;
  }
  if (!earliest) return false;
  unsigned long long active = 0;
  for (int l = 0; l < kLanes; ++l)
    if (by_lane[l] && by_lane[l]->state == State::AtWarpOp && same_site(*by_lane[l], *earliest)) active |= lane_bit(l);
  for (int l = 0; l < kLanes; ++l) {
    if (!((active >> l) & 1)) continue;
    const Op& op = by_lane[l]->op;
    if (!op.has_mask || op.group) continue;
    if (op.mask == 0) report(kMask, "warp %d lane %d: %s with mask 0", w, l, kind_name(op.kind));
    if (!((op.mask >> l) & 1))
      report(kMask, "warp %d lane %d: %s with mask %#llx, which excludes the calling lane (HIP asserts this)", w, l,
             kind_name(op.kind), op.mask);
    unsigned long long same_mask = 0;
    for (int k = 0; k < kLanes; ++k)
      if (((active >> k) & 1) && by_lane[k]->op.has_mask && by_lane[k]->op.mask == op.mask) same_mask |= lane_bit(k);
    if (same_mask != op.mask)
      report(kMask, "warp %d lane %d: %s with mask %#llx, but the lanes executing it with that mask are %#llx", w, l,
             kind_name(op.kind), op.mask, same_mask);
  }
  execute(b, w, active);
  return true;
}

inline bool resolve_warp(Block& b, int w) {
  Thread* by_lane[64] = {};
  bool waiting = false;
  for (Thread& t : b.threads) {
    if (t.warp != w) continue;
    by_lane[t.lane] = &t;
    waiting |= t.state == State::AtWarpOp;
  }
  if (!waiting) return false;
  return kHip ? resolve_hip(b, w, by_lane) : resolve_cuda(b, w, by_lane);
}

template <typename F>
struct Entry {
  static F*& fn() {
    static F* f = nullptr;
    return f;
  }
  static void run() {
    (*fn())();
    current()->state = State::Exited;
    swapcontext(&current()->context, &scheduler());
  }
};

inline unsigned long long& block_serial() {
  static unsigned long long n = 0;
  return n;
}

inline void run_block(Block& b, void (*entry)()) {
  ++block_serial();
  std::memset(b.dynamic_shared.data(), 0xff, b.dynamic_shared.size());
  for (Thread& t : b.threads) {
    if (!t.stack) t.stack = static_cast<char*>(std::malloc(kStackBytes));
    getcontext(&t.context);
    t.context.uc_stack.ss_sp = t.stack;
    t.context.uc_stack.ss_size = kStackBytes;
    t.context.uc_link = nullptr;
    makecontext(&t.context, entry, 0);
    t.state = State::Runnable;
  }
  for (;;) {
    for (Thread& t : b.threads) {
      while (t.state == State::Runnable) {
        current() = &t;
        swapcontext(&scheduler(), &t.context);
        current() = nullptr;
      }
    }
    bool progressed = false;
    for (int w = 0; w < b.warps && !progressed; ++w) progressed = resolve_warp(b, w);
    if (progressed) continue;
    const Thread* at_barrier = nullptr;
    bool all_at_barrier = true, any_live = false;
    for (const Thread& t : b.threads) {
      if (t.state == State::Exited) continue;
      any_live = true;
      if (t.state != State::AtBarrier) {
        all_at_barrier = false;
        continue;
      }
      if (at_barrier && at_barrier->site != t.site)
        report(kUndefined, "threads %d and %d wait at __syncthreads reached at different call sites", at_barrier->linear,
               t.linear);
      at_barrier = &t;
    }
    if (!any_live) return;
    if (all_at_barrier) {
      for (Thread& t : b.threads)
        if (t.state == State::AtBarrier) t.state = State::Runnable;
      continue;
    }
    for (int w = 0; w < b.warps; ++w) {
      char buf[4096] = "";
      describe_warp(b, w, buf, sizeof buf);
      std::fprintf(stderr, "lanes:   block (%u,%u,%u) warp %d:%s\n", b.block_idx.x, b.block_idx.y, b.block_idx.z, w, buf);
    }
    report(kDeadlock, "no thread of block (%u,%u,%u) can go on: a warp operation or barrier is not reached by all of "
           "its threads", b.block_idx.x, b.block_idx.y, b.block_idx.z);
  }
}

}  // namespace detail

// Launch `kernel(args...)` on grid x block threads; blocks run one after another.
template <typename... KArgs, typename... Args>
void launch(void (*kernel)(KArgs...), dim3 grid, dim3 block_dim, size_t shared_bytes, Args... args) {
  const unsigned threads = block_dim.x * block_dim.y * block_dim.z;
  if (threads == 0 || threads > 1024 || grid.x * grid.y * grid.z == 0)
    report(kUsage, "launch of %u threads per block in %u blocks is invalid", threads, grid.x * grid.y * grid.z);
  auto body = [&]() { kernel(static_cast<KArgs>(args)...); };
  using Body = decltype(body);
  detail::Entry<Body>::fn() = &body;
  static detail::Block b;
  b.threads.resize(threads);
  b.warps = static_cast<int>((threads + kLanes - 1) / kLanes);
  b.block_dim = block_dim;
  b.grid_dim = grid;
  b.dynamic_shared.assign(shared_bytes, 0);
  for (unsigned i = 0; i < threads; ++i) {
    detail::Thread& t = b.threads[i];
    t.idx = {i % block_dim.x, (i / block_dim.x) % block_dim.y, i / (block_dim.x * block_dim.y)};
    t.linear = static_cast<int>(i);
    t.warp = static_cast<int>(i / kLanes);
    t.lane = static_cast<int>(i % kLanes);
  }
  detail::block() = &b;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        b.block_idx = {x, y, z};
        detail::run_block(b, &detail::Entry<Body>::run);
      }
  detail::block() = nullptr;
}

// `kernel<<<grid, block, shared, stream>>>(args...)`, as the build rewrites it.
template <typename... KArgs>
struct Launcher {
  void (*kernel)(KArgs...);
  dim3 grid, block;
  size_t shared;
  template <typename... Args>
  void operator()(Args... args) const {
    ::lanes::launch(kernel, grid, block, shared, args...);
  }
};
template <typename... KArgs>
Launcher<KArgs...> launcher(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t shared = 0, const void* = nullptr) {
  return Launcher<KArgs...>{kernel, grid, block, shared};
}

// `extern __shared__ T name[]`: the block's dynamic shared memory (the build rewrites the
// declaration to call this; see tests/lanes/execute.py).
template <typename T>
T* dynamic_shared() {
  return reinterpret_cast<T*>(detail::block()->dynamic_shared.data());
}

// See `__shared__` below: fill a block's shared variable once per block.
inline void poison_shared(void* p, size_t bytes) {
  struct Seen {
    void* p;
    unsigned long long block;
  };
  static std::vector<Seen> seen;
  for (Seen& s : seen)
    if (s.p == p) {
      if (s.block == detail::block_serial()) return;
      s.block = detail::block_serial();
      std::memset(p, 0xff, bytes);
      return;
    }
  seen.push_back({p, detail::block_serial()});
  std::memset(p, 0xff, bytes);
}

namespace detail {
template <typename T>
unsigned long long bits_of(T v) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8, "warp operations move values of up to 64 bits");
  unsigned long long b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <typename T>
T from_bits(unsigned long long b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}
template <typename M>
unsigned long long mask_value(M mask) {
  static_assert(std::is_integral<M>::value, "a lane mask is an integer");
  // A mask converts to the intrinsic's parameter: `unsigned` on CUDA (bits past 31 are
  // dropped), 64 bits on HIP (a 32-bit value leaves lanes 32-63 out).
  // A signed mask converts as C++ converts it to the parameter (`~0` is -1: all lanes).
  return kHip ? static_cast<unsigned long long>(mask) : static_cast<unsigned long long>(static_cast<unsigned>(mask));
}
template <typename T>
T shuffle(Kind kind, bool has_mask, unsigned long long mask, T var, long long arg, int width) {
  Op op;
  op.kind = kind;
  op.has_mask = has_mask;
  op.mask = mask;
  op.value = bits_of(var);
  op.arg = arg;
  op.width = width;
  return from_bits<T>(warp_op(op));
}
inline unsigned long long vote(Kind kind, bool has_mask, unsigned long long mask, unsigned long long value) {
  Op op;
  op.kind = kind;
  op.has_mask = has_mask;
  op.mask = mask;
  op.value = value;
  return warp_op(op);
}
}  // namespace detail
}  // namespace lanes

// ---- Built-in variables -----------------------------------------------------------------
#define threadIdx (::lanes::detail::self().idx)
#define blockIdx (::lanes::detail::block()->block_idx)
#define blockDim (::lanes::detail::block()->block_dim)
#define gridDim (::lanes::detail::block()->grid_dim)
constexpr int warpSize = LANES_WARP_SIZE;

// ---- Declaration specifiers ---------------------------------------------------------------
// `__shared__` variables are static: the blocks of a launch run one after another.
#define __global__
#define __device__
#define __host__
#define __constant__
// Shared memory is uninitialised at a block's start: the build follows each `__shared__`
// declaration with `lanes::poison_shared` (tests/lanes/execute.py), which fills the variable
// with 0xff bytes (NaN floats, -1 integers) the first time a thread of each block declares
// it, so a slot no thread wrote shows in the result instead of reading as a convenient 0.
#define __shared__ static
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#ifndef __align__
#define __align__(n) alignas(n)
#endif

// ---- Synchronisation --------------------------------------------------------------------
inline void __syncthreads() { ::lanes::detail::barrier(); }
inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __nanosleep(unsigned) {}

// ---- Warp shuffles ----------------------------------------------------------------------
// CUDA: T __shfl*_sync(unsigned mask, T var, int srcLane|unsigned delta|int laneMask, int width=warpSize)
// HIP:  the same with a 64-bit mask, and the mask-less `__shfl*` (amd_warp_functions.h).
template <typename M, typename T>
T __shfl_sync(M mask, T var, int srcLane, int width = warpSize) {
  return lanes::detail::shuffle(lanes::detail::Kind::Shfl, true, lanes::detail::mask_value(mask), var, srcLane, width);
}
template <typename M, typename T>
T __shfl_up_sync(M mask, T var, unsigned delta, int width = warpSize) {
  return lanes::detail::shuffle(lanes::detail::Kind::ShflUp, true, lanes::detail::mask_value(mask), var, delta, width);
}
template <typename M, typename T>
T __shfl_down_sync(M mask, T var, unsigned delta, int width = warpSize) {
  return lanes::detail::shuffle(lanes::detail::Kind::ShflDown, true, lanes::detail::mask_value(mask), var, delta, width);
}
template <typename M, typename T>
T __shfl_xor_sync(M mask, T var, int laneMask, int width = warpSize) {
  return lanes::detail::shuffle(lanes::detail::Kind::ShflXor, true, lanes::detail::mask_value(mask), var, laneMask, width);
}
// Mask-less forms: HIP's own on 64 lanes; on CUDA, HIP's NVIDIA headers make them `_sync`
// with the full mask.
template <typename T>
T __shfl(T var, int srcLane, int width = warpSize) {
  return lanes::detail::shuffle(lanes::detail::Kind::Shfl, !lanes::kHip, lanes::kFullMask, var, srcLane, width);
}
template <typename T>
T __shfl_up(T var, unsigned delta, int width = warpSize) {
  return lanes::detail::shuffle(lanes::detail::Kind::ShflUp, !lanes::kHip, lanes::kFullMask, var, delta, width);
}
template <typename T>
T __shfl_down(T var, unsigned delta, int width = warpSize) {
  return lanes::detail::shuffle(lanes::detail::Kind::ShflDown, !lanes::kHip, lanes::kFullMask, var, delta, width);
}
template <typename T>
T __shfl_xor(T var, int laneMask, int width = warpSize) {
  return lanes::detail::shuffle(lanes::detail::Kind::ShflXor, !lanes::kHip, lanes::kFullMask, var, laneMask, width);
}

// ---- Votes, ballot, active mask, match ---------------------------------------------------
template <typename M>
int __all_sync(M mask, int predicate) {
  return static_cast<int>(lanes::detail::vote(lanes::detail::Kind::All, true, lanes::detail::mask_value(mask), predicate != 0));
}
template <typename M>
int __any_sync(M mask, int predicate) {
  return static_cast<int>(lanes::detail::vote(lanes::detail::Kind::Any, true, lanes::detail::mask_value(mask), predicate != 0));
}
template <typename M>
lanes::lane_mask_t __ballot_sync(M mask, int predicate) {
  return static_cast<lanes::lane_mask_t>(
      lanes::detail::vote(lanes::detail::Kind::Ballot, true, lanes::detail::mask_value(mask), predicate != 0));
}
inline int __all(int predicate) {
  return static_cast<int>(lanes::detail::vote(lanes::detail::Kind::All, !lanes::kHip, lanes::kFullMask, predicate != 0));
}
inline int __any(int predicate) {
  return static_cast<int>(lanes::detail::vote(lanes::detail::Kind::Any, !lanes::kHip, lanes::kFullMask, predicate != 0));
}
inline lanes::lane_mask_t __ballot(int predicate) {
  return static_cast<lanes::lane_mask_t>(
      lanes::detail::vote(lanes::detail::Kind::Ballot, !lanes::kHip, lanes::kFullMask, predicate != 0));
}
inline lanes::lane_mask_t __activemask() {
  return static_cast<lanes::lane_mask_t>(lanes::detail::vote(lanes::detail::Kind::ActiveMask, false, 0, 0));
}
template <typename M, typename T>
lanes::lane_mask_t __match_any_sync(M mask, T value) {
  return static_cast<lanes::lane_mask_t>(
      lanes::detail::vote(lanes::detail::Kind::MatchAny, true, lanes::detail::mask_value(mask), lanes::detail::bits_of(value)));
}
template <typename M, typename T>
lanes::lane_mask_t __match_all_sync(M mask, T value, int* pred) {
  lanes::detail::Op op;
  op.kind = lanes::detail::Kind::MatchAll;
  op.has_mask = true;
  op.mask = lanes::detail::mask_value(mask);
  op.value = lanes::detail::bits_of(value);
  const unsigned long long r = lanes::detail::warp_op(op);
  *pred = lanes::detail::self().op.pred;
  return static_cast<lanes::lane_mask_t>(r);
}
inline void __syncwarp() { lanes::detail::vote(lanes::detail::Kind::SyncWarp, true, lanes::kFullMask, 0); }
template <typename M>
void __syncwarp(M mask) {
  lanes::detail::vote(lanes::detail::Kind::SyncWarp, true, lanes::detail::mask_value(mask), 0);
}
// AMD's wavefront barrier (what a port's warp barrier becomes on HIP): `__syncwarp` of the
// wavefront's active lanes.
inline void __builtin_amdgcn_wave_barrier() { __syncwarp(__activemask()); }
// The calling thread's lane (HIP's `__lane_id()`).
inline unsigned __lane_id() { return static_cast<unsigned>(lanes::detail::self().lane); }

// ---- Integer intrinsics (CUDA Math API "Integer Intrinsics"; HIP device_functions.h) --------
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline unsigned long long __brevll(unsigned long long x) {
  unsigned long long r = 0;
  for (int i = 0; i < 64; ++i) r |= ((x >> i) & 1ull) << (63 - i);
  return r;
}
inline float __int_as_float(int x) { return lanes::detail::from_bits<float>(static_cast<unsigned>(x)); }
inline int __float_as_int(float x) { return static_cast<int>(lanes::detail::bits_of(x)); }

// ---- Atomics: fibers switch only at warp operations and barriers, so these are atomic. ------
namespace lanes::detail {
inline void count_spin() {
  if (++spin_budget() > 20000000ull) report(kDeadlock, "a thread spins on an atomic without end");
}
}  // namespace lanes::detail
template <typename T>
T atomicAdd(T* p, T v) {
  lanes::detail::count_spin();
  T old = *p;
  *p = old + v;
  return old;
}
template <typename T>
T atomicSub(T* p, T v) {
  lanes::detail::count_spin();
  T old = *p;
  *p = old - v;
  return old;
}
template <typename T>
T atomicExch(T* p, T v) {
  lanes::detail::count_spin();
  T old = *p;
  *p = v;
  return old;
}
template <typename T>
T atomicCAS(T* p, T compare, T v) {
  lanes::detail::count_spin();
  T old = *p;
  if (old == compare) *p = v;
  return old;
}
template <typename T>
T atomicMax(T* p, T v) {
  T old = *p;
  if (v > old) *p = v;
  return old;
}
template <typename T>
T atomicMin(T* p, T v) {
  T old = *p;
  if (v < old) *p = v;
  return old;
}
template <typename T>
T atomicOr(T* p, T v) {
  T old = *p;
  *p = old | v;
  return old;
}
template <typename T>
T atomicAnd(T* p, T v) {
  T old = *p;
  *p = old & v;
  return old;
}

// ---- Launch syntax of the runtimes ------------------------------------------------------
#define hipLaunchKernelGGL(kernel, grid, block, shared, stream, ...) \
  ::lanes::launch(kernel, dim3(grid), dim3(block), shared, ##__VA_ARGS__)

// ---- Cooperative groups -----------------------------------------------------------------
namespace cooperative_groups {

class thread_block {
 public:
  void sync() const { __syncthreads(); }
  unsigned thread_rank() const { return static_cast<unsigned>(lanes::detail::self().linear); }
  unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
  unsigned num_threads() const { return size(); }
  dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
};
inline thread_block this_thread_block() { return thread_block(); }
inline void sync(const thread_block& g) { g.sync(); }

// A group of lanes inside one warp, named by a lane mask; ranks count its set bits. Its
// operations are `_sync` operations over its mask (CUDA's tiles and coalesced groups are
// built on them); on HIP they run over the active lanes, as HIP's tile functions do.
class lane_group {
 public:
  explicit lane_group(unsigned long long members) : members_(members) {}
  unsigned size() const { return static_cast<unsigned>(__builtin_popcountll(members_)); }
  unsigned num_threads() const { return size(); }
  unsigned thread_rank() const { return rank_of(lanes::detail::self().lane); }
  void sync() const { op(lanes::detail::Kind::SyncWarp, 0); }
  template <typename T>
  T shfl(T var, int src_rank) const {
    return shuffle_by_rank(var, lane_of(static_cast<unsigned>(src_rank) % size()));
  }
  template <typename T>
  T shfl_up(T var, unsigned delta) const {
    const unsigned r = thread_rank();
    return shuffle_by_rank(var, r < delta ? lanes::detail::self().lane : lane_of(r - delta));
  }
  template <typename T>
  T shfl_down(T var, unsigned delta) const {
    const unsigned r = thread_rank();
    return shuffle_by_rank(var, r + delta >= size() ? lanes::detail::self().lane : lane_of(r + delta));
  }
  // Bits by rank in the group.
  lanes::lane_mask_t ballot(int predicate) const {
    const unsigned long long lanes_bits = op(lanes::detail::Kind::Ballot, predicate != 0);
    unsigned long long by_rank = 0;
    for (int l = 0, r = 0; l < lanes::kLanes; ++l)
      if ((members_ >> l) & 1) {
        if ((lanes_bits >> l) & 1) by_rank |= 1ull << r;
        ++r;
      }
    return static_cast<lanes::lane_mask_t>(by_rank);
  }
  bool any(int predicate) const { return ballot(predicate) != 0; }
  bool all(int predicate) const {
    return static_cast<unsigned long long>(ballot(predicate)) == (size() == 64 ? ~0ull : (1ull << size()) - 1);
  }

 protected:
  unsigned rank_of(int lane) const {
    return static_cast<unsigned>(__builtin_popcountll(members_ & ((1ull << lane) - 1)));
  }
  int lane_of(unsigned rank) const {
    for (int l = 0, r = 0; l < lanes::kLanes; ++l)
      if ((members_ >> l) & 1) {
        if (static_cast<unsigned>(r) == rank) return l;
        ++r;
      }
    return lanes::detail::self().lane;
  }
  unsigned long long op(lanes::detail::Kind kind, unsigned long long value) const {
    lanes::detail::Op o;
    o.kind = kind;
    o.has_mask = true;
    o.group = true;
    o.mask = members_;
    o.value = value;
    if (lanes::kHip) o.has_mask = false;  // HIP: over the active lanes
    return lanes::detail::warp_op(o);
  }
  template <typename T>
  T shuffle_by_rank(T var, int src_lane) const {
    lanes::detail::Op o;
    o.kind = lanes::detail::Kind::Shfl;
    o.has_mask = !lanes::kHip;
    o.group = true;
    o.mask = members_;
    o.value = lanes::detail::bits_of(var);
    o.arg = src_lane;
    o.width = lanes::kLanes;
    return lanes::detail::from_bits<T>(lanes::detail::warp_op(o));
  }
  unsigned long long members_;
};

template <unsigned N, typename Parent = void>
class thread_block_tile : public lane_group {
  static_assert(N >= 1 && N <= 64 && (N & (N - 1)) == 0, "a tile is a power of two of at most 64 lanes");

 public:
  thread_block_tile() : lane_group(members()) {}
  // A tile with its parent's type converts to the plain tile type, as in CUDA.
  template <typename OtherParent>
  thread_block_tile(const thread_block_tile<N, OtherParent>&) : lane_group(members()) {}
  static constexpr unsigned size() { return N; }
  // Tiles have shfl_xor; coalesced groups do not (CUDA's cooperative_groups.h).
  template <typename T>
  T shfl_xor(T var, unsigned mask) const {
    const unsigned r = thread_rank() ^ mask;
    return shuffle_by_rank(var, r >= N ? lanes::detail::self().lane : lane_of(r));
  }
  static constexpr unsigned num_threads() { return N; }
  unsigned thread_rank() const { return lanes::detail::self().linear & (N - 1); }
  unsigned meta_group_rank() const { return lanes::detail::self().linear / N; }
  unsigned meta_group_size() const { return (blockDim.x * blockDim.y * blockDim.z + N - 1) / N; }

 private:
  static unsigned long long members() {
    if (N > static_cast<unsigned>(lanes::kLanes))
      lanes::report(lanes::kUnsupported, "a tile of %u threads spans several %d-lane warps", N, lanes::kLanes);
    const unsigned long long tile = N == 64 ? ~0ull : (1ull << N) - 1;
    return tile << (lanes::detail::self().lane & ~static_cast<int>(N - 1));
  }
};

template <unsigned N, typename Parent>
thread_block_tile<N, Parent> tiled_partition(const Parent&) {
  return thread_block_tile<N, Parent>();
}

// A tile whose size is known at run time (`tiled_partition(block, n)`): ranks and size.
class thread_group {
 public:
  explicit thread_group(unsigned size) : size_(size) {}
  unsigned size() const { return size_; }
  unsigned num_threads() const { return size_; }
  unsigned thread_rank() const { return static_cast<unsigned>(lanes::detail::self().linear) % size_; }
  void sync() const {
    if (size_ > static_cast<unsigned>(lanes::kLanes))
      lanes::report(lanes::kUnsupported, "a tile of %u threads spans several %d-lane warps", size_, lanes::kLanes);
    const unsigned long long tile = size_ == 64 ? ~0ull : (1ull << size_) - 1;
    lanes::detail::Op o;
    o.kind = lanes::detail::Kind::SyncWarp;
    o.has_mask = !lanes::kHip;
    o.group = true;
    o.mask = tile << (lanes::detail::self().lane & ~static_cast<int>(size_ - 1));
    lanes::detail::warp_op(o);
  }

 private:
  unsigned size_;
};
inline thread_group tiled_partition(const thread_block&, unsigned size) { return thread_group(size); }

// cooperative_groups/reduce.h: the group's reduction, handed to every member. A butterfly
// over the tile's ranks (the same value in every lane; CUDA does not promise an order of
// the operations, and the emulator's is this one).
template <typename T>
struct plus {
  T operator()(T a, T b) const { return a + b; }
};
template <typename T>
struct less {
  T operator()(T a, T b) const { return b < a ? b : a; }
};
template <typename T>
struct greater {
  T operator()(T a, T b) const { return a < b ? b : a; }
};
template <unsigned N, typename Parent, typename T, typename Op>
T reduce(const thread_block_tile<N, Parent>& tile, T value, Op op) {
  for (unsigned o = N / 2; o > 0; o /= 2) value = op(value, tile.shfl_xor(value, o));
  return value;
}

class coalesced_group : public lane_group {
 public:
  explicit coalesced_group(unsigned long long members) : lane_group(members) {}
};
inline coalesced_group coalesced_threads() {
  return coalesced_group(static_cast<unsigned long long>(__activemask()));
}

}  // namespace cooperative_groups
