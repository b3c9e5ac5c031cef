/* portlint deep mode: stands in for <hip/hip_runtime.h> when the compile command names no ROCm include
   directory; prelude.h declares what the rules read. */
