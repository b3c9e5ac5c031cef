"""The ROCm build model: the project as hip-clang builds it, worked out once per scan before
any rule runs (discover -> build model -> per-file checks -> project checks -> findings).

- `build_files`: what the build files (setup.py, CMake, Makefiles) say a ROCm build compiles,
  and the defines and include directories each build takes.
- the macro environment of a ROCm build and of a CUDA build, from hip-clang's predefines, the
  build-file defines and project headers reached through `#include`, and the shims (macros
  the ROCm build defines over CUDA names).
"""
