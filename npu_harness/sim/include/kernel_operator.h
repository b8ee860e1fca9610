// kernel_operator.h - entry header of the AscendC CPU emulator (npu_harness/sim).
//
// Header-only C++20 emulation of the AscendC API subset that the ascend-dsl lowering emits
// (docs/emulator-contract.md, docs/emulator.md). Same names and signatures as the real API, each
// with one extra trailing defaulted `std::source_location` parameter so that faults name the
// calling line. Written from /work/shared/reference/ascendc.md; no CANN code is used.
#pragma once

#include "ascend_sim/core.h"
#include "ascend_sim/tensor.h"
#include "ascend_sim/pipe.h"
#include "ascend_sim/copy.h"
#include "ascend_sim/vec.h"
#include "ascend_sim/reduce.h"
#include "ascend_sim/sync.h"
#include "ascend_sim/launch.h"
#include "ascend_sim/matmul.h"
