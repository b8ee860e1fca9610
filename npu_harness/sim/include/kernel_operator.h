// kernel_operator.h - entry header of the AscendC CPU emulator (npu_harness/sim).
//
// C++20 emulation of the AscendC API subset (docs/emulator-contract.md, docs/emulator.md). Same names
// and signatures as the real API, each with one extra trailing defaulted `std::source_location`
// parameter so that faults name the calling line. Written from /work/shared/reference/ascendc.md and
// ascendc_next.md; no CANN code is used.
//
// Header-only by default (`g++ -std=c++20 -I<include> kernel.cpp`). With ASCEND_SIM_PREBUILT_RUNTIME
// the non-template runtime (Launch, reporting, DMA bookkeeping) is not compiled here but linked from
// npu_harness/sim/runtime.cpp, built once per flag set (npu_harness/sim/compiler.py does this).
#ifndef ASCEND_SIM_KERNEL_OPERATOR_H
#define ASCEND_SIM_KERNEL_OPERATOR_H

#include "ascend_sim/core.h"
#include "ascend_sim/tiling.h"
#include "ascend_sim/race.h"
#include "ascend_sim/tensor.h"
#include "ascend_sim/pipe.h"
#include "ascend_sim/copy.h"
#include "ascend_sim/vec.h"
#include "ascend_sim/reduce.h"
#include "ascend_sim/gather.h"
#include "ascend_sim/transdata.h"
#include "ascend_sim/sync.h"
#include "ascend_sim/launch.h"
#include "ascend_sim/crossflag.h"
#include "ascend_sim/matmul.h"
#include "ascend_sim/cube.h"
#include "ascend_sim/load3d.h"

#if !defined(ASCEND_SIM_PREBUILT_RUNTIME) || defined(ASCEND_SIM_RUNTIME_TU)
#include "ascend_sim/impl/runtime.h"
#endif

#endif  // ASCEND_SIM_KERNEL_OPERATOR_H
