/* portlint deep mode: what the CUDA/HIP headers would declare, for libclang.
 *
 * Force-included (-include) before every translation unit. The libclang wheel has no
 * resource headers (no __clang_cuda_runtime_wrapper.h), so the qualifiers, the builtin
 * variables and the launch-configuration functions that `<<<...>>>` needs come from here.
 * Signatures are HIP's where CUDA and HIP differ (lane masks are 64-bit), since deep mode
 * asks what the ROCm build compiles. With real headers in the compile command
 * (PORTLINT_REAL_HEADERS), only what those headers expect from clang is defined.
 */
#ifndef PORTLINT_DEEP_PRELUDE_H
#define PORTLINT_DEEP_PRELUDE_H
#define __PORTLINT_DEEP__ 1

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))

#ifdef PORTLINT_REAL_HEADERS
/* HIP's headers skip what clang's (missing) HIP wrapper header would have declared. */
#define __CLANG_HIP_RUNTIME_WRAPPER_INCLUDED__ 1
#else

typedef __SIZE_TYPE__ size_t;

struct uint3 { unsigned x, y, z; };
struct dim3 {
  unsigned x, y, z;
  __host__ __device__ constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  __host__ __device__ constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
/* A run-time value in device code only, as on ROCm 7 (W008 finds host uses). */
extern const __device__ int warpSize;

typedef struct __portlint_stream* cudaStream_t;
typedef struct __portlint_stream* hipStream_t;
typedef int cudaError_t;
typedef int hipError_t;

/* What `k<<<grid, block, shared, stream>>>(...)` calls: clang needs one of these declared. */
extern "C" int cudaConfigureCall(dim3 grid, dim3 block, size_t shared = 0, cudaStream_t stream = 0);
extern "C" unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared = 0, void* stream = 0);
extern "C" int hipConfigureCall(dim3 grid, dim3 block, size_t shared = 0, hipStream_t stream = 0);
extern "C" unsigned __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shared = 0, hipStream_t stream = 0);

/* Launch APIs, device queries and module lookups the K and R rules read. */
struct hipDeviceProp_t { int maxThreadsPerBlock; int maxThreadsDim[3]; int warpSize; int major, minor; };
typedef hipDeviceProp_t cudaDeviceProp;
typedef struct __portlint_module* hipModule_t;
typedef struct __portlint_module* CUmodule;
typedef struct __portlint_function* hipFunction_t;
typedef struct __portlint_function* CUfunction;
typedef int CUresult;
hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
hipError_t hipDeviceGetAttribute(int* value, int attribute, int device);
cudaError_t cudaDeviceGetAttribute(int* value, int attribute, int device);
hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* name);
CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name);
template <typename F, typename... Args>
void hipLaunchKernelGGL(F kernel, const dim3& grid, const dim3& block, unsigned shared, hipStream_t stream, Args... args);
template <typename F>
hipError_t hipLaunchKernel(F kernel, dim3 grid, dim3 block, void** args, size_t shared = 0, hipStream_t stream = 0);
template <typename F>
cudaError_t cudaLaunchKernel(F kernel, dim3 grid, dim3 block, void** args, size_t shared = 0, cudaStream_t stream = 0);

/* Warp intrinsics, with HIP's 64-bit lane masks. */
__device__ void __syncthreads();
__device__ void __syncwarp(unsigned long long mask = ~0ull);
__device__ unsigned long long __ballot(int predicate);
__device__ unsigned long long __ballot_sync(unsigned long long mask, int predicate);
__device__ unsigned long long __activemask();
__device__ int __any(int predicate);
__device__ int __all(int predicate);
__device__ int __any_sync(unsigned long long mask, int predicate);
__device__ int __all_sync(unsigned long long mask, int predicate);
__device__ unsigned long long __match_any(int value);
__device__ unsigned long long __match_any_sync(unsigned long long mask, int value);
__device__ unsigned long long __match_all_sync(unsigned long long mask, int value, int* pred);
__device__ unsigned long long __lanemask_lt();
__device__ unsigned long long __lanemask_le();
__device__ unsigned long long __lanemask_gt();
__device__ unsigned long long __lanemask_ge();
__device__ unsigned long long __lanemask_eq();
__device__ unsigned __lane_id();
__device__ int __popc(unsigned x);
__device__ int __popcll(unsigned long long x);
__device__ int __ffs(unsigned x);
__device__ int __ffs(int x);
__device__ int __ffsll(unsigned long long x);
__device__ int __ffsll(long long x);
__device__ int __clz(int x);
__device__ int __clzll(long long x);
__device__ unsigned __brev(unsigned x);
__device__ unsigned long long __brevll(unsigned long long x);

#define __PORTLINT_SHUFFLES(T)                                                        \
  __device__ T __shfl(T v, int lane, int width = 64);                                 \
  __device__ T __shfl_up(T v, unsigned delta, int width = 64);                        \
  __device__ T __shfl_down(T v, unsigned delta, int width = 64);                      \
  __device__ T __shfl_xor(T v, int mask, int width = 64);                             \
  __device__ T __shfl_sync(unsigned long long m, T v, int lane, int width = 64);      \
  __device__ T __shfl_up_sync(unsigned long long m, T v, unsigned d, int width = 64); \
  __device__ T __shfl_down_sync(unsigned long long m, T v, unsigned d, int width = 64); \
  __device__ T __shfl_xor_sync(unsigned long long m, T v, int lane, int width = 64);
__PORTLINT_SHUFFLES(int)
__PORTLINT_SHUFFLES(unsigned)
__PORTLINT_SHUFFLES(long)
__PORTLINT_SHUFFLES(unsigned long)
__PORTLINT_SHUFFLES(long long)
__PORTLINT_SHUFFLES(unsigned long long)
__PORTLINT_SHUFFLES(float)
__PORTLINT_SHUFFLES(double)
#undef __PORTLINT_SHUFFLES

/* HIP builtins that CUDA projects define themselves as shims for old GPUs or toolkits
 * (`__ldg` before sm_35, `atomicAdd(double*)` before sm_60): HIP's headers define them,
 * so they are defined here too, and a project's own definition is a redefinition (X001). */
__device__ inline float __ldg(const float* p) { return *p; }
__device__ inline double __ldg(const double* p) { return *p; }
__device__ inline int __ldg(const int* p) { return *p; }
__device__ inline unsigned __ldg(const unsigned* p) { return *p; }
__device__ inline double atomicAdd(double* address, double value) {
  return __atomic_fetch_add(address, value, __ATOMIC_RELAXED);
}
#endif /* PORTLINT_REAL_HEADERS */
#endif /* PORTLINT_DEEP_PRELUDE_H */
