/* portlint deep mode: stands in for <device_launch_parameters.h> (its real version needs clang's CUDA wrapper headers,
   which the libclang wheel lacks); prelude.h declares what the rules read. */
