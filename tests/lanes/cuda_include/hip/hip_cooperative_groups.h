// <hip/hip_cooperative_groups.h> for an NVIDIA build of a hipified fixture.
#pragma once
#include <cooperative_groups.h>
