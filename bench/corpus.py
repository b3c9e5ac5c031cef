"""A synthetic, deterministic CUDA/C++/CMake source tree for benchmarking portlint.

Everything here is generated from templates with a seeded `random.Random`: the same
seed and size give byte-identical files. The tree looks like a mid-sized GPU library
(a few components, each with public headers, kernels, host wrappers, tests and
CMakeLists.txt), mostly clean, with a sprinkling of the port hazards that HAZARDS.md
catalogues: 32-lane masks, warp-size literals, inline PTX, cuBLAS calls, CUDA-only
CMake. Some hazards sit in `#ifdef USE_ROCM ... #else` CUDA-only arms (dead on ROCm),
and some carry a suppression comment, so the filters are exercised too.

`manifest["planted"]` counts what was planted where (live / dead / suppressed), so a
benchmark can check that the scan really saw the files.

Run `python bench/corpus.py DIR [--size-mb N] [--seed S]` to write a corpus by hand.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import sys
from collections import Counter
from pathlib import Path

GENERATOR_VERSION = 2
DEFAULT_SIZE_MB = 20.0
DEFAULT_GPU_SHARE = 0.4
MANIFEST = ".bench-corpus.json"


class CorpusError(Exception):
    """The corpus directory cannot be used; a one-line message."""

_OPS = """softmax layer_norm rms_norm gelu silu rotary topk argmax histogram prefix_sum transpose
gather scatter_add embedding dropout adam_step sgd_update quantize_int8 dequantize cross_entropy
attention_scores masked_fill cumsum bias_add residual_add l2_norm group_norm batch_norm max_pool
avg_pool im2col col2im sort_keys unique nms roi_align upsample pad concat split reduce_sum
reduce_max dot axpy gemv spmv csr_to_dense bitonic_sort radix_pass moe_route kv_cache_copy
alibi_bias fp8_cast welford_stats lerp clamp where cast_half fill iota one_hot logsumexp""".split()
_SUFFIXES = ["", "_fwd", "_bwd", "_fused", "_v2", "_inplace", "_strided", "_vec4", "_rowwise", "_tiled"]
_LIBS = ["tensorkit", "fastops", "gpukern", "nnlite", "sparsekit", "visionops", "quantlib", "attnkit"]
_MODULES = ["core", "ops", "nn", "linalg", "sparse", "vision", "attention", "quant", "optim",
            "util", "reduce", "elementwise", "norm", "embed", "sampling", "io"]
_TYPES = ["float", "double", "int", "__half", "int64_t"]
_WORDS = """the kernel computes each row column block thread warp lane tile shared memory value
result input output buffer stride offset index element batch head sequence token feature
channel gradient weight bias scale mean variance partial sum maximum minimum accumulate reduce
write read load store launch grid stream device host pointer size count length width height
aligned vectorized coalesced padding boundary check overflow epsilon numerically stable""".split()
# Comments of host code talk about other things.
_HOST_WORDS = """the function returns each row column value result input output buffer stride offset index
element batch key entry table string parser token field record file path option flag error status
code message log level cache hash map vector list queue size count length capacity reserve copy move
swap sort search merge split join format escape quote number integer float double precision rounding
iterator range begin end owner handle reference pointer null empty valid invalid default config""".split()


class Gen:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.planted: Counter[str] = Counter()
        self._used_names: Counter[str] = Counter()

    # ---- small helpers ------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, seq):
        return self.rng.choice(seq)

    def sentence(self, lo: int = 5, hi: int = 14, vocabulary: list[str] = _WORDS) -> str:
        words = [self.pick(vocabulary) for _ in range(self.rng.randint(lo, hi))]
        return " ".join(words).capitalize() + "."

    def doc(self, indent: str = "", vocabulary: list[str] = _WORDS) -> str:
        if self.chance(0.5):
            lines = [f"{indent}/**"] + [f"{indent} * {self.sentence(vocabulary=vocabulary)}"
                                        for _ in range(self.rng.randint(1, 4))]
            if self.chance(0.5):
                lines.append(f"{indent} * @param n {self.sentence(3, 6, vocabulary)}")
            return "\n".join(lines + [f"{indent} */"]) + "\n"
        return "".join(f"{indent}// {self.sentence(vocabulary=vocabulary)}\n" for _ in range(self.rng.randint(1, 3)))

    def host_doc(self, indent: str = "") -> str:
        return self.doc(indent, _HOST_WORDS)

    def host_sentence(self, lo: int = 5, hi: int = 14) -> str:
        return self.sentence(lo, hi, _HOST_WORDS)

    def name(self) -> str:
        base = self.pick(_OPS) + self.pick(_SUFFIXES)
        n = self._used_names[base] = self._used_names[base] + 1
        return base if n == 1 else f"{base}{n}"

    def full_mask(self, where: str = "live", uses: int = 1) -> str:
        """A warp-intrinsic mask: mostly clean, sometimes the 32-lane literal (`uses` call sites)."""
        r = self.rng.random()
        if where == "dead":
            self.planted["W002-dead"] += uses
            return self.pick(["0xffffffff", "0xFFFFFFFFu"])
        if r < 0.06:
            self.planted["W002-live"] += uses
            return self.pick(["0xffffffff", "0xFFFFFFFF", "0xffffffffu", "0xFFFFFFFFu"])
        return self.pick(["FULL_MASK", "FULL_MASK", "FULL_MASK", "kFullMask", "__activemask()"])

    def suppressed_mask_line(self, call: str) -> str:
        self.planted["W002-suppressed"] += 1
        tag = self.pick(["// portlint: ignore[W002]", "// NOLINT(portlint-W002)", "// portlint: ignore"])
        return f"{call}  {tag}"

    # ---- file preambles -----------------------------------------------------------
    def platform_block(self) -> str:
        macro = self.pick(["defined(USE_ROCM)", "defined(__HIP_PLATFORM_AMD__)",
                           "defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)"])
        return (
            f"#if {macro}\n"
            "#include <hip/hip_runtime.h>\n"
            "#define WARP_SIZE 64\n"
            "#define FULL_MASK (~0ull)\n"
            "typedef unsigned long long lane_mask_t;\n"
            "#else\n"
            "#include <cuda_runtime.h>\n"
            "#define WARP_SIZE 32\n"
            "#define FULL_MASK 0xffffffffu\n"
            "typedef unsigned int lane_mask_t;\n"
            "#endif\n"
        )

    def header(self, lib: str, module: str, stem: str, target: int = 0) -> str:
        guard = f"{lib}_{module}_{stem}_CUH_".upper()
        out = []
        pragma = self.chance(0.4)
        out.append(f"// {lib}/{module}/{stem}.cuh\n// {self.sentence()}\n")
        out.append("#pragma once\n" if pragma else f"#ifndef {guard}\n#define {guard}\n")
        out.append("\n#include <cstdint>\n#include <cstddef>\n")
        if self.chance(0.85):
            out.append(self.platform_block())
        else:
            self.planted["W001-define"] += 1
            self.planted["W002-live"] += 1  # the 32-lane FULL_MASK definition itself
            out.append("#include <cuda_runtime.h>\n#define WARP_SIZE 32\n#define FULL_MASK 0xffffffffu\n")
        out.append(f"\n#ifndef {lib.upper()}_INLINE\n#define {lib.upper()}_INLINE __device__ __forceinline__\n#endif\n")
        out.append(f"\nnamespace {lib} {{\nnamespace {module} {{\n\n")
        out.append(f"constexpr unsigned long long kFullMask = ~0ull;\n\n")
        pieces = self.rng.randint(2, 6)
        size = sum(map(len, out))
        while pieces > 0 or size < target:  # headers grow by more helpers
            piece = self.pick([self.warp_reduce, self.block_reduce, self.ballot_helper, self.device_struct,
                               self.vec_load_helper, self.lane_helpers])() + "\n"
            out.append(piece)
            size += len(piece)
            pieces -= 1
        out.append(f"}}  // namespace {module}\n}}  // namespace {lib}\n")
        if not pragma:
            out.append(f"\n#endif  // {guard}\n")
        return "".join(out)

    # ---- device code pieces -------------------------------------------------------
    def warp_reduce(self) -> str:
        op, fn = self.pick([("sum", "val += {s};"), ("max", "val = max(val, {s});"), ("min", "val = min(val, {s});")])
        shfl = self.pick(["__shfl_down_sync", "__shfl_xor_sync"])
        name = f"warp_reduce_{op}_{self.rng.randint(0, 999)}"
        start = "WARP_SIZE / 2"
        if self.chance(0.08):
            start = "16"
            self.planted["W001-loop16"] += 1
        if self.chance(0.2):
            # Guarded variant: the CUDA-only arm keeps the 32-lane mask (dead on ROCm).
            dead = self.full_mask("dead")
            body = (
                "#if defined(USE_ROCM)\n"
                f"    {fn.format(s=f'__shfl_down(val, offset)')}\n"
                "#else\n"
                f"    {fn.format(s=f'{shfl}({dead}, val, offset)')}\n"
                "#endif\n"
            )
        elif self.chance(0.04):
            call = fn.format(s=f"{shfl}(0xffffffff, val, offset)")
            body = f"    {self.suppressed_mask_line(call)}\n"
        else:
            mask = self.full_mask()
            body = f"    {fn.format(s=f'{shfl}({mask}, val, offset)')}\n"
        return (
            self.doc()
            + "template <typename T>\n"
            + f"__device__ __forceinline__ T {name}(T val) {{\n"
            + "#pragma unroll\n"
            + f"  for (int offset = {start}; offset > 0; offset >>= 1) {{\n"
            + body
            + "  }\n  return val;\n}\n"
        )

    def block_reduce(self) -> str:
        name = f"block_reduce_{self.pick(['sum', 'max'])}_{self.rng.randint(0, 999)}"
        lane, wid = "threadIdx.x % WARP_SIZE", "threadIdx.x / WARP_SIZE"
        shared = "WARP_SIZE"
        if self.chance(0.1):
            lane, wid = "threadIdx.x & 31", "threadIdx.x >> 5"
            self.planted["W001-lane-math"] += 1
        if self.chance(0.1):
            shared = "32"
            self.planted["W007-shared32"] += 1
        mask = self.full_mask(uses=2)
        return (
            self.doc()
            + "template <typename T>\n"
            + f"__device__ T {name}(T val) {{\n"
            + f"  __shared__ T shared[{shared}];\n"
            + f"  const int lane = {lane};\n"
            + f"  const int wid = {wid};\n"
            + "  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {\n"
            + f"    val += __shfl_xor_sync({mask}, val, offset);\n"
            + "  }\n"
            + "  if (lane == 0) shared[wid] = val;\n"
            + "  __syncthreads();\n"
            + "  val = (threadIdx.x < blockDim.x / WARP_SIZE) ? shared[lane] : T(0);\n"
            + "  if (wid == 0) {\n"
            + "    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {\n"
            + f"      val += __shfl_xor_sync({mask}, val, offset);\n"
            + "    }\n  }\n  return val;\n}\n"
        )

    def ballot_helper(self) -> str:
        name = f"count_active_{self.rng.randint(0, 999)}"
        mask = self.full_mask()
        if self.chance(0.12):
            self.planted["W003-ballot-uint"] += 1
            return (
                self.doc()
                + f"__device__ __forceinline__ int {name}(bool pred) {{\n"
                + f"  unsigned int ballot = __ballot_sync({mask}, pred);\n"
                + "  return __popc(ballot);\n}\n"
            )
        return (
            self.doc()
            + f"__device__ __forceinline__ int {name}(bool pred) {{\n"
            + f"  lane_mask_t ballot = __ballot_sync({mask}, pred);\n"
            + "  return __popcll(ballot);\n}\n"
        )

    def device_struct(self) -> str:
        name = "".join(w.capitalize() for w in self.name().split("_")) + "Params"
        fields = self.rng.sample(["const float* input", "float* output", "const float* weight",
                                  "const float* bias", "int64_t rows", "int64_t cols", "float eps",
                                  "float scale", "int stride", "int batch", "bool inplace"],
                                 self.rng.randint(3, 7))
        body = "".join(f"  {f};\n" for f in fields)
        return (
            self.doc()
            + f"struct {name} {{\n{body}\n"
            + f"  __host__ __device__ int64_t numel() const {{ return static_cast<int64_t>({self.rng.randint(1, 8)}) * 1024; }}\n"
            + "};\n"
        )

    def vec_load_helper(self) -> str:
        n = self.rng.randint(0, 999)
        return (
            self.doc()
            + f"__device__ __forceinline__ float4 load_vec4_{n}(const float* __restrict__ p, int i) {{\n"
            + "  return *reinterpret_cast<const float4*>(p + 4 * i);\n}\n\n"
            + f"__device__ __forceinline__ void store_vec4_{n}(float* __restrict__ p, int i, float4 v) {{\n"
            + "  *reinterpret_cast<float4*>(p + 4 * i) = v;\n}\n"
        )

    def lane_helpers(self) -> str:
        n = self.rng.randint(0, 999)
        if self.chance(0.1):
            self.planted["A001-inline-ptx"] += 1
            return (
                f"__device__ __forceinline__ unsigned lane_id_{n}() {{\n"
                + "  unsigned lane;\n"
                + '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));\n'
                + "  return lane;\n}\n"
            )
        return (
            f"__device__ __forceinline__ int lane_id_{n}() {{ return threadIdx.x % warpSize; }}\n"
            + f"__device__ __forceinline__ int warp_id_{n}() {{ return threadIdx.x / warpSize; }}\n"
        )

    # ---- kernels ------------------------------------------------------------------
    def kernel(self) -> tuple[str, str, str]:
        """(kernel source, kernel name, argument kind)"""
        kind = self.pick(["elementwise", "elementwise", "reduce", "softmax", "matmul", "histogram",
                          "scan", "transpose"])
        name = self.name() + "_kernel"
        return getattr(self, f"k_{kind}")(name), name, kind

    def launch_bounds(self) -> str:
        if self.chance(0.35):
            if self.chance(0.15):
                return f"__launch_bounds__({self.pick([256, 512])}, {self.rng.randint(1, 4)}) "
            return f"__launch_bounds__({self.pick([128, 256, 256, 512])}) "
        return ""

    def k_elementwise(self, name: str) -> str:
        expr = self.pick(["x * scale + bias", "x > 0.f ? x : 0.f", "x / (1.f + __expf(-x))",
                          "0.5f * x * (1.f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)))",
                          "fminf(fmaxf(x, lo), hi)", "a[i] * x + b[i]"])
        params = "const float* __restrict__ a, const float* __restrict__ b, " if "a[i]" in expr else ""
        extra = "float lo, float hi, " if "lo" in expr else ""
        self._elementwise_args = ("in, out, " + ("in, in, " if params else "") + ("-1.f, 1.f, " if extra else "")
                                  + "scale, bias, n")
        return (
            self.doc()
            + f"__global__ void {self.launch_bounds()}{name}(const float* __restrict__ in, float* __restrict__ out, "
            + f"{params}{extra}float scale, float bias, int64_t n) {{\n"
            + "  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;\n"
            + "       i += (int64_t)blockDim.x * gridDim.x) {\n"
            + "    const float x = in[i];\n"
            + f"    out[i] = {expr};\n"
            + "  }\n}\n"
        )

    def k_reduce(self, name: str) -> str:
        mask = self.full_mask(uses=2)
        atomic = "atomicAdd(out + blockIdx.y, sum);"
        if self.chance(0.3):
            self.planted["N002-float-atomic"] += 1
        else:
            atomic = "out[blockIdx.y * gridDim.x + blockIdx.x] = sum;"
        return (
            self.doc()
            + "template <typename T, int BLOCK>\n"
            + f"__global__ void {self.launch_bounds()}{name}(const T* __restrict__ in, float* __restrict__ out, int n) {{\n"
            + "  __shared__ float partial[BLOCK / WARP_SIZE];\n"
            + "  float sum = 0.f;\n"
            + "  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += BLOCK * gridDim.x) {\n"
            + "    sum += static_cast<float>(in[blockIdx.y * n + i]);\n  }\n"
            + "  for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1) {\n"
            + f"    sum += __shfl_down_sync({mask}, sum, offset);\n  }}\n"
            + "  const int lane = threadIdx.x % WARP_SIZE;\n"
            + "  const int warp = threadIdx.x / WARP_SIZE;\n"
            + "  if (lane == 0) partial[warp] = sum;\n"
            + "  __syncthreads();\n"
            + "  if (warp == 0) {\n"
            + "    sum = lane < BLOCK / WARP_SIZE ? partial[lane] : 0.f;\n"
            + "    for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1) {\n"
            + f"      sum += __shfl_down_sync({mask}, sum, offset);\n    }}\n"
            + f"    if (lane == 0) {atomic}\n"
            + "  }\n}\n"
        )

    def k_softmax(self, name: str) -> str:
        m1, m2 = self.full_mask(), self.full_mask()
        arch = ""
        if self.chance(0.1):
            self.planted["P001-cuda-arch"] += 1
            arch = ("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
                    "  const float inv = __frcp_rn(s);\n#else\n  const float inv = 1.f / s;\n#endif\n")
        else:
            arch = "  const float inv = 1.f / s;\n"
        return (
            self.doc()
            + f"__global__ void {self.launch_bounds()}{name}(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {{\n"
            + "  const int row = blockIdx.x * (blockDim.x / WARP_SIZE) + threadIdx.x / WARP_SIZE;\n"
            + "  const int lane = threadIdx.x % WARP_SIZE;\n"
            + "  if (row >= rows) return;\n"
            + "  const float* in = x + (int64_t)row * cols;\n"
            + "  float m = -INFINITY;\n"
            + "  for (int c = lane; c < cols; c += WARP_SIZE) m = fmaxf(m, in[c]);\n"
            + "  for (int o = WARP_SIZE / 2; o > 0; o >>= 1) {\n"
            + f"    m = fmaxf(m, __shfl_xor_sync({m1}, m, o));\n  }}\n"
            + "  float s = 0.f;\n"
            + "  for (int c = lane; c < cols; c += WARP_SIZE) s += __expf(in[c] - m);\n"
            + "  for (int o = WARP_SIZE / 2; o > 0; o >>= 1) {\n"
            + f"    s += __shfl_xor_sync({m2}, s, o);\n  }}\n"
            + arch
            + "  for (int c = lane; c < cols; c += WARP_SIZE) {\n"
            + "    y[(int64_t)row * cols + c] = __expf(in[c] - m) * inv;\n  }\n}\n"
        )

    def k_matmul(self, name: str) -> str:
        tile = self.pick([16, 16, 32])
        pad = self.pick(["", " + 1"])
        return (
            self.doc()
            + f"template <int TILE = {tile}>\n"
            + f"__global__ void {self.launch_bounds()}{name}(const float* A, const float* B, float* C, int M, int N, int K) {{\n"
            + f"  __shared__ float As[TILE][TILE{pad}];\n"
            + f"  __shared__ float Bs[TILE][TILE{pad}];\n"
            + "  const int row = blockIdx.y * TILE + threadIdx.y;\n"
            + "  const int col = blockIdx.x * TILE + threadIdx.x;\n"
            + "  float acc = 0.f;\n"
            + "  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {\n"
            + "    const int ak = t * TILE + threadIdx.x;\n"
            + "    const int bk = t * TILE + threadIdx.y;\n"
            + "    As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[row * K + ak] : 0.f;\n"
            + "    Bs[threadIdx.y][threadIdx.x] = (bk < K && col < N) ? B[bk * N + col] : 0.f;\n"
            + "    __syncthreads();\n"
            + "#pragma unroll\n"
            + "    for (int k = 0; k < TILE; ++k) {\n"
            + "      acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];\n    }\n"
            + "    __syncthreads();\n  }\n"
            + "  if (row < M && col < N) C[row * N + col] = acc;\n}\n"
        )

    def k_histogram(self, name: str) -> str:
        bins = self.pick([64, 128, 256])
        return (
            self.doc()
            + f"__global__ void {self.launch_bounds()}{name}(const int* __restrict__ keys, unsigned int* __restrict__ hist, int n) {{\n"
            + f"  __shared__ unsigned int local[{bins}];\n"
            + f"  for (int i = threadIdx.x; i < {bins}; i += blockDim.x) local[i] = 0;\n"
            + "  __syncthreads();\n"
            + "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {\n"
            + f"    atomicAdd(&local[keys[i] & {bins - 1}], 1u);\n  }}\n"
            + "  __syncthreads();\n"
            + f"  for (int i = threadIdx.x; i < {bins}; i += blockDim.x) atomicAdd(&hist[i], local[i]);\n"
            + "}\n"
        )

    def k_scan(self, name: str) -> str:
        mask = self.full_mask()
        width = ""
        if self.chance(0.1):
            width = ", 32"
            self.planted["W004-width32"] += 1
        return (
            self.doc()
            + f"__global__ void {self.launch_bounds()}{name}(const float* __restrict__ in, float* __restrict__ out, int n) {{\n"
            + "  extern __shared__ float warp_sums[];\n"
            + "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            + "  const int lane = threadIdx.x % WARP_SIZE;\n"
            + "  float v = i < n ? in[i] : 0.f;\n"
            + "  for (int d = 1; d < WARP_SIZE; d <<= 1) {\n"
            + f"    const float t = __shfl_up_sync({mask}, v, d{width});\n"
            + "    if (lane >= d) v += t;\n  }\n"
            + "  if (lane == WARP_SIZE - 1) warp_sums[threadIdx.x / WARP_SIZE] = v;\n"
            + "  __syncthreads();\n"
            + "  if (i < n) out[i] = v;\n}\n"
        )

    def k_transpose(self, name: str) -> str:
        tile = self.pick([16, 32])
        return (
            self.doc()
            + f"__global__ void {self.launch_bounds()}{name}(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {{\n"
            + f"  __shared__ float tile[{tile}][{tile} + 1];\n"
            + f"  int x = blockIdx.x * {tile} + threadIdx.x;\n"
            + f"  int y = blockIdx.y * {tile} + threadIdx.y;\n"
            + "  if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];\n"
            + "  __syncthreads();\n"
            + f"  x = blockIdx.y * {tile} + threadIdx.x;\n"
            + f"  y = blockIdx.x * {tile} + threadIdx.y;\n"
            + "  if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];\n}\n"
        )

    # ---- host code ----------------------------------------------------------------
    def launcher(self, kernel: str, kind: str, lib: str) -> str:
        block = self.pick(["256", "256", "128", "kBlockSize", "threads"])
        if self.chance(0.04):
            block = self.pick(["512", "1024"])
            self.planted["K002-block-literal"] += 1
        templ = ""
        if kind == "reduce":
            templ = f"<float, {block if block.isdigit() else '256'}>"
        elif kind == "matmul":
            templ = "<16>"
        args = {
            "elementwise": "in, out, scale, bias, n",
            "reduce": "in, out, static_cast<int>(n)",
            "softmax": "in, out, rows, cols",
            "matmul": "in, in, out, rows, cols, rows",
            "histogram": "reinterpret_cast<const int*>(in), reinterpret_cast<unsigned int*>(out), static_cast<int>(n)",
            "scan": "in, out, static_cast<int>(n)",
            "transpose": "in, out, rows, cols",
        }[kind]
        if kind == "elementwise":
            args = self._elementwise_args
        smem = "0"
        if kind == "scan":
            smem = "(threads / WARP_SIZE) * sizeof(float)" if block == "threads" else f"({block} / WARP_SIZE) * sizeof(float)"
        grid = self.pick(["static_cast<int>((n + threads - 1) / threads)", "blocks", "dim3(blocks)",
                          "dim3((cols + 15) / 16, (rows + 15) / 16)"])
        launch_name = kernel.removesuffix("_kernel")
        style = self.rng.random()
        if style < 0.45:
            launch = (
                "#if defined(USE_ROCM)\n"
                f"  hipLaunchKernelGGL(({kernel}{templ}), dim3(grid), dim3(block), {smem}, stream, {args});\n"
                "#else\n"
                f"  {kernel}{templ}<<<grid, block, {smem}, stream>>>({args});\n"
                "#endif\n"
            )
        elif style < 0.85:
            launch = f"  {kernel}{templ}<<<grid, block, {smem}, stream>>>({args});\n"
        else:
            launch = f"  {kernel}{templ}<<<grid, block>>>({args});\n"
        return (
            self.doc()
            + f"void launch_{launch_name}(const float* in, float* out, float scale, float bias, int64_t n,\n"
            + f"    int rows, int cols, cudaStream_t stream) {{\n"
            + "  const int threads = 256;\n"
            + "  const int blocks = static_cast<int>(std::min<int64_t>((n + threads - 1) / threads, 65535));\n"
            + f"  const dim3 grid = {grid};\n"
            + f"  const dim3 block({block});\n"
            + "  (void)scale; (void)bias; (void)rows; (void)cols;\n"
            + launch
            + f"  {lib.upper()}_CHECK(cudaGetLastError());\n}}\n"
        )

    def kernel_file(self, lib: str, module: str, stem: str, target: int, include: str) -> str:
        out = [f"// {self.sentence()}\n// {self.sentence()}\n\n"]
        out.append(f'#include "{include}"\n\n#include <algorithm>\n#include <cstdio>\n#include <cstdlib>\n')
        if self.chance(0.2):
            out.append("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n")
        out.append(
            f"\n#define {lib.upper()}_CHECK(expr)                                              \\\n"
            "  do {                                                                      \\\n"
            "    cudaError_t err__ = (expr);                                             \\\n"
            "    if (err__ != cudaSuccess) {                                             \\\n"
            '      std::fprintf(stderr, "%s:%d: %s\\n", __FILE__, __LINE__,               \\\n'
            "                   cudaGetErrorString(err__));                              \\\n"
            "      std::abort();                                                         \\\n"
            "    }                                                                       \\\n"
            "  } while (0)\n\n"
        )
        out.append(f"namespace {lib} {{\nnamespace {module} {{\nnamespace {{\n\n")
        out.append("constexpr int kBlockSize = 256;\n\n")
        if self.chance(0.12):
            out.append("#define KERNEL_LOOP(i, n) \\\n"
                       "  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); \\\n"
                       "       i += (int64_t)blockDim.x * gridDim.x)\n\n")
            out.append(self.macro_kernel() + "\n")
        if self.chance(0.1):
            out.append(self.lambda_launch() + "\n")
        size = sum(map(len, out))
        launchers = []
        while size < target:
            src, name, kind = self.kernel()
            out.append(src + "\n")
            launchers.append(self.launcher(name, kind, lib) + "\n")
            size += len(src) + len(launchers[-1])
            if self.chance(0.15):
                extra = self.pick([self.warp_reduce, self.ballot_helper, self.lane_helpers, self.coop_groups])()
                out.append(extra + "\n")
                size += len(extra)
        out.append("}  // namespace\n\n")
        out.extend(launchers)
        if self.chance(0.1):
            self.planted["M002-managed"] += 1
            out.append(
                "float* alloc_scratch(size_t n) {\n  float* p = nullptr;\n"
                f"  {lib.upper()}_CHECK(cudaMallocManaged(&p, n * sizeof(float)));\n  return p;\n}}\n\n"
            )
        out.append(f"}}  // namespace {module}\n}}  // namespace {lib}\n")
        return "".join(out)

    def macro_kernel(self) -> str:
        """A kernel written with a project loop macro, as real trees do (leaves an ERROR node)."""
        name = self.name() + "_kernel"
        return (
            self.doc()
            + f"__global__ void {name}(const float* __restrict__ in, float* __restrict__ out, int64_t n) {{\n"
            + "  KERNEL_LOOP(i, n) {\n"
            + f"    out[i] = in[i] * {self.rng.randint(2, 9)}.f;\n"
            + "  }\n}\n"
        )

    def lambda_launch(self) -> str:
        """Host code launching an extended `__device__` lambda (leaves a small ERROR node)."""
        fn = self.name()
        return (
            self.doc()
            + "template <typename F>\n"
            + f"__global__ void {fn}_apply_kernel(int64_t n, F f) {{\n"
            + "  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
            + "  if (i < n) f(i);\n}\n\n"
            + f"void {fn}(float* out, const float* in, int64_t n, cudaStream_t stream) {{\n"
            + "  const int threads = 256;\n"
            + "  const int blocks = static_cast<int>((n + threads - 1) / threads);\n"
            + f"  {fn}_apply_kernel<<<blocks, threads, 0, stream>>>(n, [=] __device__ (int64_t i) {{\n"
            + f"    out[i] = in[i] + {self.rng.randint(1, 9)}.f;\n"
            + "  });\n}\n"
        )

    def coop_groups(self) -> str:
        n = self.rng.randint(0, 999)
        size = "WARP_SIZE"
        if self.chance(0.3):
            size = "32"
            self.planted["W006-tile32"] += 1
        return (
            f"__device__ float tile_sum_{n}(float v) {{\n"
            + f"  auto tile = cg::tiled_partition<{size}>(cg::this_thread_block());\n"
            + "  for (int i = tile.size() / 2; i > 0; i /= 2) v += tile.shfl_down(v, i);\n"
            + "  return v;\n}\n"
        )

    def blas_file(self, lib: str, module: str, target: int) -> str:
        cls = "".join(w.capitalize() for w in self.name().split("_")) + "Gemm"
        self.planted["L001-cublas"] += 1
        out = [f"// {self.sentence()}\n\n"]
        if self.chance(0.5):
            out.append(
                "#if defined(__HIP_PLATFORM_AMD__)\n#include <hipblas/hipblas.h>\n"
                "#define cublasHandle_t hipblasHandle_t\n#else\n#include <cublas_v2.h>\n#endif\n"
            )
        else:
            out.append("#include <cublas_v2.h>\n")
        out.append("#include <stdexcept>\n#include <string>\n#include <vector>\n\n")
        out.append(
            "#define CUBLAS_CHECK(expr)                                             \\\n"
            "  do {                                                                 \\\n"
            "    cublasStatus_t st__ = (expr);                                      \\\n"
            "    if (st__ != CUBLAS_STATUS_SUCCESS) {                               \\\n"
            '      throw std::runtime_error("cuBLAS error " + std::to_string(st__)); \\\n'
            "    }                                                                  \\\n"
            "  } while (0)\n\n"
        )
        out.append(f"namespace {lib} {{\nnamespace {module} {{\n\n")
        out.append(self.doc())
        out.append(
            f"class {cls} {{\n public:\n  {cls}() {{ CUBLAS_CHECK(cublasCreate(&handle_)); }}\n"
            f"  ~{cls}() {{ cublasDestroy(handle_); }}\n"
            f"  {cls}(const {cls}&) = delete;\n  {cls}& operator=(const {cls}&) = delete;\n\n"
            "  void set_stream(cudaStream_t s) { CUBLAS_CHECK(cublasSetStream(handle_, s)); }\n\n"
        )
        size = sum(map(len, out))
        while size < target:
            fn = self.name()
            op = self.pick(["CUBLAS_OP_N", "CUBLAS_OP_T"])
            piece = self.doc("  ") + self.pick([
                f"  void {fn}(const float* A, const float* B, float* C, int m, int n, int k) {{\n"
                "    const float alpha = 1.0f, beta = 0.0f;\n"
                f"    CUBLAS_CHECK(cublasSgemm(handle_, {op}, CUBLAS_OP_N, m, n, k, &alpha, A, m, B, k, &beta, C, m));\n"
                "  }\n\n",
                f"  void {fn}(const double* x, double* y, int n, double a) {{\n"
                "    CUBLAS_CHECK(cublasDaxpy(handle_, n, &a, x, 1, y, 1));\n  }\n\n",
                f"  float {fn}(const float* x, const float* y, int n) {{\n"
                "    float r = 0.f;\n    CUBLAS_CHECK(cublasSdot(handle_, n, x, 1, y, 1, &r));\n    return r;\n  }\n\n",
                f"  void {fn}(const void* A, const void* B, void* C, int m, int n, int k) {{\n"
                "    const float alpha = 1.0f, beta = 0.0f;\n"
                f"    CUBLAS_CHECK(cublasGemmEx(handle_, {op}, CUBLAS_OP_N, m, n, k, &alpha, A, CUDA_R_16F, m,\n"
                "                              B, CUDA_R_16F, k, &beta, C, CUDA_R_32F, m, CUBLAS_COMPUTE_32F,\n"
                "                              CUBLAS_GEMM_DEFAULT_TENSOR_OP));\n  }\n\n",
            ])
            out.append(piece)
            size += len(piece)
        out.append(" private:\n  cublasHandle_t handle_ = nullptr;\n};\n\n")
        out.append(f"}}  // namespace {module}\n}}  // namespace {lib}\n")
        return "".join(out)

    def host_file(self, lib: str, module: str, target: int, header: str | None) -> str:
        out = [f"// {self.sentence()}\n\n"]
        if header:
            out.append(f'#include "{header}"\n\n')
        out.append("#include <cstdint>\n#include <map>\n#include <memory>\n#include <sstream>\n"
                   "#include <string>\n#include <vector>\n\n")
        out.append(f"namespace {lib} {{\nnamespace {module} {{\n\n")
        size = sum(map(len, out))
        while size < target:
            piece = self.pick([self.cpp_shape, self.cpp_registry, self.cpp_template_fn, self.cpp_enum,
                               self.cpp_device_query])()
            out.append(self.doc() + piece + "\n")
            size += len(piece) + 80
        out.append(f"}}  // namespace {module}\n}}  // namespace {lib}\n")
        return "".join(out)

    def cpp_shape(self) -> str:
        name = "".join(w.capitalize() for w in self.name().split("_")) + "Shape"
        return (
            f"class {name} {{\n public:\n"
            f"  explicit {name}(std::vector<int64_t> dims) : dims_(std::move(dims)) {{}}\n"
            "  int64_t numel() const {\n    int64_t n = 1;\n    for (int64_t d : dims_) n *= d;\n    return n;\n  }\n"
            "  std::vector<int64_t> strides() const {\n"
            "    std::vector<int64_t> s(dims_.size(), 1);\n"
            "    for (int i = static_cast<int>(dims_.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims_[i + 1];\n"
            "    return s;\n  }\n"
            "  std::string str() const {\n    std::ostringstream os;\n    os << '[';\n"
            "    for (size_t i = 0; i < dims_.size(); ++i) os << (i ? \", \" : \"\") << dims_[i];\n"
            "    os << ']';\n    return os.str();\n  }\n\n private:\n  std::vector<int64_t> dims_;\n};\n"
        )

    def cpp_registry(self) -> str:
        n = self.rng.randint(0, 999)
        return (
            f"using KernelFn{n} = void (*)(const float*, float*, int64_t);\n\n"
            f"std::map<std::string, KernelFn{n}>& registry_{n}() {{\n"
            f"  static std::map<std::string, KernelFn{n}> table;\n  return table;\n}}\n\n"
            f"bool register_kernel_{n}(const std::string& name, KernelFn{n} fn) {{\n"
            f"  return registry_{n}().emplace(name, fn).second;\n}}\n"
        )

    def cpp_template_fn(self) -> str:
        fn = self.name()
        return (
            "template <typename T, typename Op>\n"
            f"T {fn}_host(const std::vector<T>& values, T init, Op op) {{\n"
            "  T acc = init;\n  for (const T& v : values) {\n    acc = op(acc, v);\n  }\n  return acc;\n}\n"
        )

    def cpp_enum(self) -> str:
        name = "".join(w.capitalize() for w in self.name().split("_")) + "Mode"
        items = self.rng.sample(["kNone", "kFast", "kAccurate", "kDeterministic", "kTiled", "kVector", "kFused"], 4)
        cases = "".join(f'    case {name}::{i}: return "{i[1:].lower()}";\n' for i in items)
        return (
            f"enum class {name} {{ {', '.join(items)} }};\n\n"
            f"inline const char* to_string({name} m) {{\n  switch (m) {{\n{cases}  }}\n  return \"?\";\n}}\n"
        )

    def cpp_device_query(self) -> str:
        n = self.rng.randint(0, 999)
        if self.chance(0.08):
            self.planted["R001-cc-check"] += 1
            cond = "prop.major >= 8"
        else:
            cond = "prop.sharedMemPerBlock >= 64 * 1024"
        return (
            f"bool supports_fast_path_{n}(int device) {{\n"
            "  cudaDeviceProp prop;\n"
            "  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return false;\n"
            f"  return {cond};\n}}\n"
        )

    def test_file(self, lib: str, module: str, header: str, target: int) -> str:
        out = [f'#include "{header}"\n\n#include <gtest/gtest.h>\n#include <vector>\n\n',
               f"using namespace {lib}::{module};\n\n"]
        size = sum(map(len, out))
        while size < target:
            suite = "".join(w.capitalize() for w in self.name().split("_")) + "Test"
            n = self.rng.randint(1, 4096)
            piece = (
                f"TEST({suite}, {self.pick(['Basic', 'Empty', 'Large', 'Strided', 'Aligned'])}) {{\n"
                f"  std::vector<float> host({n}, 1.0f);\n"
                "  float* dev = nullptr;\n"
                "  ASSERT_EQ(cudaMalloc(&dev, host.size() * sizeof(float)), cudaSuccess);\n"
                "  ASSERT_EQ(cudaMemcpy(dev, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);\n"
                "  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);\n"
                f"  EXPECT_FLOAT_EQ(host[0], 1.0f);\n"
                "  cudaFree(dev);\n}\n\n"
            )
            out.append(piece)
            size += len(piece)
        return "".join(out)

    # ---- plain C++: the host side of a GPU library ------------------------------------
    # Real GPU libraries are mostly host code: CPU reference paths, utilities, bindings,
    # vendored third-party code, CPU tests. These files name no CUDA or HIP API, but they
    # do use what naive byte filters would trip on: `assert`, `std::thread`,
    # `steady_clock`, `int32_t`, `<<` on streams and bits, include guards, `extern "C"`.
    def cpu_op(self) -> str:
        fn = self.name()
        kind = self.pick(["map", "reduce", "bitset", "stencil", "sort", "parallel"])
        if kind == "map":
            expr = self.pick(["x * scale + bias", "x > 0.f ? x : 0.f", "std::tanh(x)", "x / (1.f + std::exp(-x))"])
            return (
                self.host_doc()
                + f"void {fn}_cpu(const float* in, float* out, int64_t n, float scale, float bias) {{\n"
                + "  assert(in != nullptr && out != nullptr);\n"
                + "#pragma omp parallel for if (n > 4096)\n"
                + "  for (int64_t i = 0; i < n; ++i) {\n"
                + "    const float x = in[i];\n"
                + f"    out[i] = {expr};\n  }}\n}}\n"
            )
        if kind == "reduce":
            return (
                self.host_doc()
                + f"double {fn}_cpu(const std::vector<float>& values) {{\n"
                + "  double sum = 0.0, c = 0.0;  // Kahan summation\n"
                + "  for (float v : values) {\n"
                + "    const double y = static_cast<double>(v) - c;\n"
                + "    const double t = sum + y;\n"
                + "    c = (t - sum) - y;\n    sum = t;\n  }\n"
                + "  return sum;\n}\n"
            )
        if kind == "bitset":
            return (
                self.host_doc()
                + f"class {self.camel(fn)}Bitset {{\n public:\n"
                + f"  explicit {self.camel(fn)}Bitset(size_t bits) : words_((bits + 31) / 32, 0u) {{}}\n"
                + "  void set(size_t i) { words_[i >> 5] |= (1u << (i & 31)); }\n"
                + "  bool test(size_t i) const { return (words_[i / 32] >> (i % 32)) & 1u; }\n"
                + "  size_t count() const {\n    size_t n = 0;\n"
                + "    for (uint32_t w : words_) n += static_cast<size_t>(std::bitset<32>(w).count());\n"
                + "    return n;\n  }\n\n private:\n  std::vector<uint32_t> words_;\n};\n"
            )
        if kind == "stencil":
            return (
                self.host_doc()
                + f"void {fn}_planes(const float* src, float* dst, int planes, int rows, int cols) {{\n"
                + "  // One plane at a time; each output pixel averages a 3x3 neighbourhood.\n"
                + "  for (int p = 0; p < planes; ++p) {\n"
                + "    const float* plane = src + static_cast<int64_t>(p) * rows * cols;\n"
                + "    for (int r = 1; r + 1 < rows; ++r) {\n"
                + "      for (int c = 1; c + 1 < cols; ++c) {\n"
                + "        float acc = 0.f;\n"
                + "        for (int dr = -1; dr <= 1; ++dr)\n"
                + "          for (int dc = -1; dc <= 1; ++dc) acc += plane[(r + dr) * cols + c + dc];\n"
                + "        dst[(static_cast<int64_t>(p) * rows + r) * cols + c] = acc / 9.f;\n"
                + "      }\n    }\n  }\n}\n"
            )
        if kind == "sort":
            return (
                self.host_doc()
                + "template <typename Key>\n"
                + f"void {fn}_radix(std::vector<Key>& keys) {{\n"
                + "  std::vector<Key> tmp(keys.size());\n"
                + "  for (int shift = 0; shift < 32; shift += 8) {\n"
                + "    size_t counts[257] = {0};\n"
                + "    for (Key k : keys) ++counts[((k >> shift) & 0xff) + 1];\n"
                + "    for (int b = 0; b < 256; ++b) counts[b + 1] += counts[b];\n"
                + "    for (Key k : keys) tmp[counts[(k >> shift) & 0xff]++] = k;\n"
                + "    keys.swap(tmp);\n  }\n}\n"
            )
        return (
            self.host_doc()
            + f"void {fn}_parallel(std::vector<float>& data, int workers) {{\n"
            + "  std::vector<std::thread> pool;\n"
            + "  const size_t chunk = (data.size() + workers - 1) / workers;\n"
            + "  const auto start = std::chrono::steady_clock::now();\n"
            + "  for (int w = 0; w < workers; ++w) {\n"
            + "    pool.emplace_back([&, w] {\n"
            + "      const size_t lo = w * chunk, hi = std::min(data.size(), lo + chunk);\n"
            + "      for (size_t i = lo; i < hi; ++i) data[i] = data[i] * 0.5f;  // half of it\n"
            + "    });\n  }\n"
            + "  for (auto& t : pool) t.join();\n"
            + "  const auto elapsed = std::chrono::steady_clock::now() - start;\n"
            + "  (void)elapsed;\n}\n"
        )

    def camel(self, name: str) -> str:
        return "".join(w.capitalize() for w in name.split("_"))

    def cpu_file(self, lib: str, module: str, target: int) -> str:
        pieces = []
        size = 0
        while size < target:
            piece = self.cpu_op() + "\n"
            pieces.append(piece)
            size += len(piece) + 40
        body = "".join(pieces)
        # Include what the pieces use, as a real file would.
        wanted = {"<algorithm>": "std::min", "<bitset>": "std::bitset", "<cassert>": "assert(",
                  "<chrono>": "std::chrono", "<cmath>": "std::", "<thread>": "std::thread", "<vector>": "std::vector"}
        includes = "".join(f"#include {h}\n" for h, used in wanted.items() if used in body)
        return (f"// {self.host_sentence()}\n// CPU reference implementation.\n\n"
                f'#include "{lib}/{module}/cpu_ops.h"\n\n{includes}#include <cstdint>\n\n'
                f"namespace {lib} {{\nnamespace {module} {{\nnamespace cpu {{\n\n"
                + body
                + f"}}  // namespace cpu\n}}  // namespace {module}\n}}  // namespace {lib}\n")

    def util_header(self, lib: str, stem: str, target: int) -> str:
        guard = f"{lib}_UTIL_{stem}_H_".upper()
        prefix = lib.upper()
        out = [f"// {self.host_sentence()}\n#ifndef {guard}\n#define {guard}\n\n"
               "#include <cstdint>\n#include <cstdio>\n#include <sstream>\n#include <string>\n#include <vector>\n\n"]
        out.append(f"#define {prefix}_LIKELY(x) __builtin_expect(!!(x), 1)\n"
                   f"#define {prefix}_UNLIKELY(x) __builtin_expect(!!(x), 0)\n"
                   f"#define {prefix}_STRINGIFY(x) #x\n\n")
        out.append(f"namespace {lib} {{\nnamespace util {{\n\n")
        size = sum(map(len, out))
        while size < target:
            piece = self.host_doc() + self.pick([self.util_logger, self.util_strings, self.util_status, self.util_hash,
                                            self.cpp_enum, self.util_small_vector])() + "\n"
            out.append(piece)
            size += len(piece)
        out.append(f"}}  // namespace util\n}}  // namespace {lib}\n\n#endif  // {guard}\n")
        return "".join(out)

    def c_api_header(self, lib: str) -> str:
        """The library's C API: `extern "C"` behind `#ifdef __cplusplus` (which tree-sitter
        reads as an ERROR, as in real C headers)."""
        guard = f"{lib}_C_API_H_".upper()
        decls = "".join(f"int {lib}_{self.name()}(const float* in, float* out, long n);\n" for _ in range(40))
        return (f"/* {lib} C API. */\n#ifndef {guard}\n#define {guard}\n\n#include <stddef.h>\n\n"
                '#ifdef __cplusplus\nextern "C" {\n#endif\n\n'
                f"int {lib}_version_major(void);\nint {lib}_version_minor(void);\n"
                f"const char* {lib}_build_info(void);\n{decls}\n"
                '#ifdef __cplusplus\n}  // extern "C"\n#endif\n\n'
                f"#endif  /* {guard} */\n")

    def util_logger(self) -> str:
        name = self.camel(self.name()) + "Log"
        return (
            f"class {name} {{\n public:\n"
            f"  explicit {name}(const char* file, int line) {{ os_ << file << ':' << line << \": \"; }}\n"
            f"  ~{name}() {{ std::fprintf(stderr, \"%s\\n\", os_.str().c_str()); }}\n"
            "  template <typename T>\n"
            f"  {name}& operator<<(const T& value) {{\n    os_ << value;\n    return *this;\n  }}\n\n"
            " private:\n  std::ostringstream os_;\n};\n"
        )

    def util_strings(self) -> str:
        fn = self.name()
        return (
            f"inline std::vector<std::string> {fn}_split(const std::string& text, char sep) {{\n"
            "  std::vector<std::string> parts;\n  std::string current;\n"
            "  for (char ch : text) {\n"
            "    if (ch == sep) {\n      parts.push_back(current);\n      current.clear();\n"
            "    } else {\n      current.push_back(ch);\n    }\n  }\n"
            "  parts.push_back(current);\n  return parts;\n}\n"
        )

    def util_status(self) -> str:
        name = self.camel(self.name()) + "Status"
        return (
            f"class {name} {{\n public:\n"
            f"  static {name} ok() {{ return {name}(0, \"\"); }}\n"
            f"  {name}(int32_t code, std::string message) : code_(code), message_(std::move(message)) {{}}\n"
            "  bool is_ok() const { return code_ == 0; }\n"
            "  int32_t code() const { return code_; }\n"
            "  const std::string& message() const { return message_; }\n\n"
            " private:\n  int32_t code_;\n  std::string message_;\n};\n"
        )

    def util_hash(self) -> str:
        fn = self.name()
        return (
            f"inline uint32_t {fn}_hash(const void* data, size_t len, uint32_t seed = 0x9747b28cu) {{\n"
            "  const uint8_t* p = static_cast<const uint8_t*>(data);\n"
            "  uint32_t h = seed ^ static_cast<uint32_t>(len);\n"
            "  for (size_t i = 0; i < len; ++i) {\n"
            "    h ^= p[i];\n    h *= 0x5bd1e995u;\n    h ^= h >> 15;\n  }\n"
            "  return (h << 13) | (h >> 19);\n}\n"
        )

    def util_small_vector(self) -> str:
        name = self.camel(self.name()) + "SmallVec"
        n = self.pick([4, 8, 16])
        return (
            f"template <typename T, size_t N = {n}>\n"
            f"class {name} {{\n public:\n"
            "  void push_back(const T& v) {\n"
            "    if (size_ < N) {\n      inline_[size_++] = v;\n    } else {\n      heap_.push_back(v);\n      ++size_;\n    }\n  }\n"
            "  const T& operator[](size_t i) const { return i < N ? inline_[i] : heap_[i - N]; }\n"
            "  size_t size() const { return size_; }\n\n"
            " private:\n  T inline_[N] = {};\n  std::vector<T> heap_;\n  size_t size_ = 0;\n};\n"
        )

    def bindings_file(self, lib: str, modules: list[str], target: int) -> str:
        out = [f"// Python bindings of {lib} (pybind11).\n\n#include <pybind11/pybind11.h>\n"
               "#include <pybind11/stl.h>\n\n#include <string>\n#include <vector>\n\n"
               "namespace py = pybind11;\n\n"]
        body = []
        size = sum(map(len, out))
        while size < target:
            fn = self.name()
            module = self.pick(modules)
            line = (f"  m.def(\"{fn}\", [](const std::vector<float>& x, float scale) {{\n"
                    "    std::vector<float> y(x.size());\n"
                    "    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * scale;\n"
                    f"    return y;\n  }}, py::arg(\"x\"), py::arg(\"scale\") = 1.0f, \"{self.host_sentence()} ({module})\");\n")
            body.append(line)
            size += len(line)
        out.append(f"PYBIND11_MODULE(_{lib}, m) {{\n  m.doc() = \"{self.host_sentence()}\";\n" + "".join(body) + "}\n")
        return "".join(out)

    def third_party_header(self, name: str, stem: str, target: int) -> str:
        guard = f"{name}_{stem}_HPP".upper()
        out = [f"// {name}: vendored third-party code, MIT licensed.\n// {self.host_sentence()}\n"
               f"#ifndef {guard}\n#define {guard}\n\n#include <cstddef>\n#include <cstring>\n#include <map>\n"
               "#include <stdexcept>\n#include <string>\n#include <utility>\n#include <vector>\n\n"
               f"namespace {name} {{\n\n"]
        size = sum(map(len, out))
        while size < target:
            piece = self.pick([self.tp_value, self.tp_parser, self.tp_writer])() + "\n"
            out.append(piece)
            size += len(piece)
        out.append(f"}}  // namespace {name}\n\n#endif  // {guard}\n")
        return "".join(out)

    def tp_value(self) -> str:
        name = self.camel(self.name()) + "Value"
        return (
            f"class {name} {{\n public:\n"
            "  enum class Kind { Null, Bool, Number, String, Array, Object };\n"
            f"  {name}() = default;\n"
            f"  explicit {name}(double n) : kind_(Kind::Number), number_(n) {{}}\n"
            f"  explicit {name}(std::string s) : kind_(Kind::String), string_(std::move(s)) {{}}\n"
            "  Kind kind() const noexcept { return kind_; }\n"
            "  double as_number() const {\n"
            "    if (kind_ != Kind::Number) throw std::runtime_error(\"not a number\");\n"
            "    return number_;\n  }\n"
            f"  const {name}& operator[](const std::string& key) const {{\n"
            "    auto it = object_.find(key);\n"
            "    if (it == object_.end()) throw std::out_of_range(key);\n"
            "    return it->second;\n  }\n\n"
            " private:\n  Kind kind_ = Kind::Null;\n  double number_ = 0;\n  std::string string_;\n"
            f"  std::vector<{name}> array_;\n  std::map<std::string, {name}> object_;\n}};\n"
        )

    def tp_parser(self) -> str:
        fn = self.name()
        return (
            f"inline size_t {fn}_skip_ws(const char* s, size_t i, size_t n) noexcept {{\n"
            "  while (i < n && (s[i] == ' ' || s[i] == '\\t' || s[i] == '\\n' || s[i] == '\\r')) ++i;\n"
            "  return i;\n}\n\n"
            f"inline std::pair<double, size_t> {fn}_number(const char* s, size_t i, size_t n) {{\n"
            "  size_t j = i;\n  if (j < n && (s[j] == '-' || s[j] == '+')) ++j;\n"
            "  while (j < n && ((s[j] >= '0' && s[j] <= '9') || s[j] == '.' || s[j] == 'e' || s[j] == 'E')) ++j;\n"
            "  if (j == i) throw std::invalid_argument(\"expected a number\");\n"
            "  return {std::stod(std::string(s + i, j - i)), j};\n}\n"
        )

    def tp_writer(self) -> str:
        fn = self.name()
        return (
            f"inline void {fn}_escape(const std::string& in, std::string& out) {{\n"
            "  out.reserve(out.size() + in.size() + 2);\n  out.push_back('\"');\n"
            "  for (char c : in) {\n    switch (c) {\n"
            "      case '\"': out += \"\\\\\\\"\"; break;\n      case '\\\\': out += \"\\\\\\\\\"; break;\n"
            "      case '\\n': out += \"\\\\n\"; break;\n"
            "      default:\n        if (static_cast<unsigned char>(c) < 0x20) {\n"
            "          char buf[8];\n          std::snprintf(buf, sizeof buf, \"\\\\u%04x\", c);\n          out += buf;\n"
            "        } else {\n          out.push_back(c);\n        }\n    }\n  }\n  out.push_back('\"');\n}\n"
        )

    def cpu_test_file(self, lib: str, module: str, target: int) -> str:
        out = [f'#include "{lib}/{module}/cpu_ops.h"\n\n#include <gtest/gtest.h>\n#include <cstdint>\n#include <vector>\n\n']
        size = sum(map(len, out))
        while size < target:
            suite = self.camel(self.name()) + "CpuTest"
            n = self.rng.randint(1, 4096)
            piece = (
                f"TEST({suite}, {self.pick(['Basic', 'Empty', 'Large', 'Strided', 'Aligned'])}) {{\n"
                f"  std::vector<float> x({n}, 2.0f), y({n});\n"
                "  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * 0.5f;\n"
                "  EXPECT_FLOAT_EQ(y[0], 1.0f);\n"
                f"  EXPECT_EQ(static_cast<int32_t>(y.size()), {n});\n}}\n\n"
            )
            out.append(piece)
            size += len(piece)
        return "".join(out)

    # ---- CMake --------------------------------------------------------------------
    def cmake_root(self, project: str, libs: list[str]) -> str:
        subdirs = "".join(f"add_subdirectory({lib})\n" for lib in libs)
        arch = 'set(CMAKE_CUDA_ARCHITECTURES "70;75;80;86" CACHE STRING "")\n'
        if self.chance(0.5):
            arch += 'set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942" CACHE STRING "")\n'
        return (
            "cmake_minimum_required(VERSION 3.21)\n"
            f"project({project} LANGUAGES C CXX)\n\n"
            f'option(USE_ROCM "Build for AMD GPUs with HIP" OFF)\n'
            f'option({project.upper()}_BUILD_TESTS "Build the tests" ON)\n\n'
            "set(CMAKE_CXX_STANDARD 17)\nset(CMAKE_CXX_STANDARD_REQUIRED ON)\n"
            'list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_SOURCE_DIR}/cmake")\n'
            "include(GpuHelpers)\n\n"
            "if(USE_ROCM)\n"
            "  enable_language(HIP)\n"
            "  find_package(hip REQUIRED)\n"
            "  add_compile_definitions(USE_ROCM)\n"
            "else()\n"
            "  enable_language(CUDA)\n"
            "  find_package(CUDAToolkit REQUIRED)\n"
            f"  {arch}"
            "endif()\n\n"
            + subdirs
        )

    def cmake_helpers(self) -> str:
        return (
            "# Helpers shared by every component.\n\n"
            "function(gpu_add_library name)\n"
            "  cmake_parse_arguments(ARG \"\" \"\" \"SOURCES;DEPS\" ${ARGN})\n"
            "  if(USE_ROCM)\n"
            "    set_source_files_properties(${ARG_SOURCES} PROPERTIES LANGUAGE HIP)\n"
            "  endif()\n"
            "  add_library(${name} STATIC ${ARG_SOURCES})\n"
            "  target_link_libraries(${name} PUBLIC ${ARG_DEPS})\n"
            "endfunction()\n\n"
            "macro(gpu_warn_flags target)\n"
            "  if(NOT USE_ROCM)\n"
            "    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)\n"
            "  endif()\n"
            "endmacro()\n"
        )

    def cmake_lib(self, lib: str, sources: list[str], has_tests: bool) -> str:
        srcs = "".join(f"  {s}\n" for s in sources)
        flags = ""
        if self.chance(0.4):
            self.planted["B001-nvcc-flag"] += 1
            flags = ("target_compile_options(" + lib + " PRIVATE\n"
                     "  $<$<COMPILE_LANGUAGE:CUDA>:--use_fast_math -lineinfo -Xptxas=-v>)\n")
        links = "CUDA::cudart CUDA::cublas" if self.chance(0.5) else "${GPU_RUNTIME_LIBS}"
        if "CUDA::" in links:
            self.planted["C003-cuda-target"] += 1
        tests = "\nif(" + lib.upper() + "_BUILD_TESTS OR BUILD_TESTING)\n  add_subdirectory(tests)\nendif()\n" if has_tests else ""
        return (
            f"# {lib}: {self.sentence()}\n\n"
            f"add_library({lib} STATIC\n{srcs})\n"
            f"target_include_directories({lib} PUBLIC ${{CMAKE_CURRENT_SOURCE_DIR}}/include)\n\n"
            "if(USE_ROCM)\n"
            f"  target_link_libraries({lib} PUBLIC hip::device roc::hipblas)\n"
            f"  set_target_properties({lib} PROPERTIES HIP_ARCHITECTURES \"gfx90a;gfx942\")\n"
            "else()\n"
            f"  target_link_libraries({lib} PUBLIC {links})\n"
            f"  set_target_properties({lib} PROPERTIES CUDA_SEPARABLE_COMPILATION ON\n"
            "                                      CUDA_ARCHITECTURES \"80;86\")\n"
            "endif()\n"
            + flags + tests
        )

    def cmake_tests(self, lib: str, tests: list[str]) -> str:
        out = ["find_package(GTest REQUIRED)\n\n"]
        for t in tests:
            name = Path(t).stem
            out.append(f"add_executable({name} {t})\n"
                       f"target_link_libraries({name} PRIVATE {lib} GTest::gtest_main)\n"
                       f"add_test(NAME {name} COMMAND {name})\n\n")
        return "".join(out)


def _target_size(rng: random.Random, lo: int = 1500, hi: int = 40000) -> int:
    return int(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def generate(out_dir: Path, size_mb: float = DEFAULT_SIZE_MB, seed: int = 1234,
             gpu_share: float = DEFAULT_GPU_SHARE) -> dict:
    """Write the corpus into `out_dir` (which must be empty or absent); return its manifest.

    `gpu_share` is the fraction of bytes in GPU-facing files (kernels, CUDA headers, cuBLAS
    wrappers, host launchers, GPU tests); the rest is plain C++ host code (CPU reference
    paths, utilities, bindings, vendored third-party headers, CPU tests). 1.0 gives the
    all-GPU tree of generator version 1, byte for byte.
    """
    g = Gen(seed)
    rng = g.rng
    budget = int(size_mb * 1024 * 1024)
    files: dict[str, str] = {}

    def put(rel: str, text: str) -> None:
        files[rel] = text

    project = "gpulib"
    libs = rng.sample(_LIBS, 4)
    put("portlint.toml", "# The benchmark corpus is its own project root.\n")
    put("cmake/GpuHelpers.cmake", g.cmake_helpers())
    put("CMakeLists.txt", g.cmake_root(project, libs))
    total = sum(map(len, files.values()))
    lib_state = {lib: {"sources": [], "tests": [], "headers": []} for lib in libs}
    modules = {lib: rng.sample(_MODULES, rng.randint(3, 6)) for lib in libs}
    counter = 0
    gpu_bytes = host_bytes = 0
    cpu_headers: set[str] = set()
    while total < budget:
        counter += 1
        if gpu_share < 1.0 and gpu_bytes >= gpu_share * max(total, 1):
            rel, text = _host_file(g, libs, modules, cpu_headers, files)
            if rel is not None:
                put(rel, text)
                total += len(text)
                host_bytes += len(text)
            continue
        lib = rng.choice(libs)
        module = rng.choice(modules[lib])
        state = lib_state[lib]
        stem = g.name()
        target = _target_size(rng)
        roll = rng.random()
        if roll < 0.22 or not state["headers"]:
            rel_inc = f"{lib}/{module}/{stem}.cuh"
            if rng.random() < 0.3:
                rel_inc = f"{lib}/{module}/detail/{stem}.cuh"
            path = f"{lib}/include/{rel_inc}"
            text = g.header(lib, module, stem, int(target * 0.6))
            state["headers"].append(rel_inc)
        elif roll < 0.62:
            ext = rng.choices([".cu", ".hip", ".cuh"], weights=[12, 1, 1])[0]
            sub = rng.choice(["", "", "kernels/", "detail/"])
            path = f"{lib}/src/{module}/{sub}{stem}{ext}"
            text = g.kernel_file(lib, module, stem, target, rng.choice(state["headers"]))
            if ext != ".cuh":
                state["sources"].append(path.removeprefix(f"{lib}/"))
        elif roll < 0.70:
            path = f"{lib}/src/{module}/{stem}_blas.cpp"
            text = g.blas_file(lib, module, target)
            state["sources"].append(path.removeprefix(f"{lib}/"))
        elif roll < 0.86:
            ext = rng.choice([".cpp", ".cpp", ".cc", ".h", ".hpp"])
            base = f"{lib}/src/{module}" if ext in (".cpp", ".cc") else f"{lib}/include/{lib}/{module}"
            path = f"{base}/{stem}{ext}"
            text = g.host_file(lib, module, target, rng.choice(state["headers"]) if rng.random() < 0.6 else None)
            if ext in (".cpp", ".cc"):
                state["sources"].append(path.removeprefix(f"{lib}/"))
        else:
            path = f"{lib}/tests/test_{stem}.cu"
            text = g.test_file(lib, module, rng.choice(state["headers"]), min(target, 12000))
            state["tests"].append(path.removeprefix(f"{lib}/tests/"))
        if path in files:
            continue
        put(path, text)
        total += len(text)
        gpu_bytes += len(text)
    for lib in libs:
        state = lib_state[lib]
        put(f"{lib}/CMakeLists.txt", g.cmake_lib(lib, sorted(state["sources"]), bool(state["tests"])))
        if state["tests"]:
            put(f"{lib}/tests/CMakeLists.txt", g.cmake_tests(lib, sorted(state["tests"])))
        # Some modules carry their own CMake fragment (an object library of their sources).
        for module in modules[lib]:
            srcs = sorted(s for s in state["sources"] if s.startswith(f"src/{module}/"))
            if srcs and rng.random() < 0.5:
                body = "".join(f"  ${{CMAKE_CURRENT_SOURCE_DIR}}/{Path(s).relative_to(f'src/{module}')}\n" for s in srcs)
                put(f"{lib}/src/{module}/CMakeLists.txt",
                    f"# {module} sources of {lib}\n"
                    f"gpu_add_library({lib}_{module}\n  SOURCES\n{body}  DEPS {lib})\n"
                    f"gpu_warn_flags({lib}_{module})\n")

    out_dir.mkdir(parents=True, exist_ok=True)
    for rel, text in sorted(files.items()):
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    data = [t.encode("utf-8") for t in files.values()]
    manifest = {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "size_mb": size_mb,
        "gpu_share": gpu_share,
        "gpu_bytes": gpu_bytes,
        "host_bytes": host_bytes,
        "files": len(files) - 1,  # portlint.toml is not source
        "bytes": sum(len(d) for d in data),
        "lines": sum(d.count(b"\n") for d in data),
        "cmake_files": sum(1 for p in files if p.endswith(("CMakeLists.txt", ".cmake"))),
        "planted": dict(sorted(g.planted.items())),
    }
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def _host_file(g: Gen, libs: list[str], modules: dict[str, list[str]], cpu_headers: set[str],
               files: dict[str, str]) -> tuple[str | None, str]:
    """One plain C++ file of the host side (None when the name is taken)."""
    rng = g.rng
    lib = rng.choice(libs)
    module = rng.choice(modules[lib])
    stem = g.name()
    target = _target_size(rng)
    c_api = f"{lib}/include/{lib}/c_api.h"
    if c_api not in cpu_headers:
        cpu_headers.add(c_api)
        return c_api, g.c_api_header(lib)
    header = f"{lib}/include/{lib}/{module}/cpu_ops.h"
    if header not in cpu_headers:  # what the CPU files and CPU tests of the module include
        cpu_headers.add(header)
        return header, g.util_header(lib, f"{module}_cpu_ops", int(target * 0.5))
    roll = rng.random()
    if roll < 0.35:
        rel, text = f"{lib}/src/{module}/cpu/{stem}_cpu.cpp", g.cpu_file(lib, module, target)
    elif roll < 0.55:
        rel, text = f"{lib}/include/{lib}/util/{stem}.h", g.util_header(lib, stem, int(target * 0.7))
    elif roll < 0.75:
        vendor = rng.choice(["minijson", "fmtlite", "argparse_lite"])
        rel, text = f"third_party/{vendor}/include/{vendor}/{stem}.hpp", g.third_party_header(vendor, stem, target)
    elif roll < 0.80:
        rel, text = f"{lib}/python/{stem}_bindings.cpp", g.bindings_file(lib, modules[lib], min(target, 20000))
    else:
        rel, text = f"{lib}/tests/cpu/test_{stem}.cpp", g.cpu_test_file(lib, module, min(target, 12000))
    return (None, "") if rel in files else (rel, text)


def ensure(out_dir: Path, size_mb: float, seed: int, regenerate: bool = False,
           gpu_share: float = DEFAULT_GPU_SHARE) -> tuple[dict, bool]:
    """Reuse `out_dir` if it holds a corpus made with these settings, else (re)generate it.

    Returns (manifest, generated_now). Refuses to delete a non-empty directory that is
    not a corpus made here.
    """
    stamp = out_dir / MANIFEST
    if stamp.is_file() and not regenerate:
        try:
            manifest = json.loads(stamp.read_text())
        except (OSError, ValueError):
            manifest = {}
        if (manifest.get("generator_version") == GENERATOR_VERSION and manifest.get("seed") == seed
                and manifest.get("size_mb") == size_mb and manifest.get("gpu_share") == gpu_share):
            return manifest, False
    if out_dir.exists():
        if not out_dir.is_dir():
            raise CorpusError(f"{out_dir} exists and is not a directory")
        if any(out_dir.iterdir()):
            if not stamp.is_file():
                raise CorpusError(f"{out_dir} is not empty and is not a benchmark corpus; "
                                  "pick another --corpus directory")
            shutil.rmtree(out_dir)
    return generate(out_dir, size_mb, seed, gpu_share), True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the synthetic CUDA/C++/CMake benchmark corpus.")
    parser.add_argument("directory", type=Path)
    parser.add_argument("--size-mb", type=float, default=DEFAULT_SIZE_MB)
    parser.add_argument("--gpu-share", type=float, default=DEFAULT_GPU_SHARE,
                        help="fraction of bytes in GPU-facing files (default %(default)s; 1 = all GPU code)")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--regenerate", action="store_true")
    args = parser.parse_args(argv)
    try:
        if not 0 < args.gpu_share <= 1:
            raise CorpusError("--gpu-share must be in (0, 1]")
        manifest, _ = ensure(args.directory, args.size_mb, args.seed, args.regenerate, args.gpu_share)
    except (CorpusError, OSError) as exc:
        print(f"corpus: error: {exc}", file=sys.stderr)
        return 2
    json.dump(manifest, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
