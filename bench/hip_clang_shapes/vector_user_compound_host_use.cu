#include <cuda_runtime.h>
inline void operator*=(float2& a, const float2& b) { a.x *= b.x; a.y *= b.y; }
float2 host_scale(float2 a, float2 b) { a *= b; return a; }
