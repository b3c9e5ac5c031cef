/* portlint deep mode: stands in for <cuda_runtime_api.h> (its real version needs clang's CUDA wrapper headers,
   which the libclang wheel lacks); prelude.h declares what the rules read. */
