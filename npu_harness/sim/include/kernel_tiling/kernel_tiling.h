// kernel_tiling/kernel_tiling.h - emulator stand-in for the real header declaring
// AscendC::tiling::TCubeTiling (ref §3).
#pragma once
#ifndef ASCEND_SIM_KERNEL_TILING_KERNEL_TILING_H
#define ASCEND_SIM_KERNEL_TILING_KERNEL_TILING_H

#include "ascend_sim/cube_tiling.h"

// Kernels name it unqualified too (the generated kernel-side tiling header declares it globally).
using AscendC::tiling::TCubeTiling;

#endif  // ASCEND_SIM_KERNEL_TILING_KERNEL_TILING_H
