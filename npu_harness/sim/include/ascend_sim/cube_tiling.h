// ascend_sim/cube_tiling.h - TCubeTiling, the tiling structure the Matmul API reads (ref §3). Field
// names follow AscendC::tiling::TCubeTiling; the emulator reads the fields listed in docs/emulator.md.
// Written from /work/shared/reference/ascendc.md; no CANN code is used.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_CUBE_TILING_H
#define ASCEND_SIM_ASCEND_SIM_CUBE_TILING_H

#include <cstdint>

namespace AscendC::tiling {

struct TCubeTiling {
    int32_t usedCoreNum = 0;   // logical cores that run a Matmul (AIV in MIX mode)
    int32_t M = 0;             // original shape: C is M x N, A is M x Ka, B is Kb x N
    int32_t N = 0;
    int32_t Ka = 0;
    int32_t Kb = 0;
    int32_t singleCoreM = 0;   // the block one core computes (SetTail may shrink it per block)
    int32_t singleCoreN = 0;
    int32_t singleCoreK = 0;
    int32_t baseM = 0;         // one Iterate(): baseM x baseN of C, baseK of K per L0 step
    int32_t baseN = 0;
    int32_t baseK = 0;
    int32_t depthA1 = 0;       // baseM x baseK tiles of A held in L1
    int32_t depthB1 = 0;       // baseK x baseN tiles of B held in L1
    int32_t stepM = 0;         // base blocks per L1 load along M / N / K
    int32_t stepN = 0;
    int32_t isBias = 0;
    int32_t transLength = 0;
    int32_t iterateOrder = 0;  // 0: M moves fastest between Iterate() calls, 1: N moves fastest
    int32_t shareMode = 0;
    int32_t shareL1Size = 0;
    int32_t shareL0CSize = 0;
    int32_t shareUbSize = 0;
    int32_t batchM = 0;
    int32_t batchN = 0;
    int32_t singleBatchM = 0;
    int32_t singleBatchN = 0;
    int32_t stepKa = 0;
    int32_t stepKb = 0;
    int32_t depthAL1CacheUB = 0;
    int32_t depthBL1CacheUB = 0;
    int32_t dbL0A = 0;         // 2: L0A double-buffered
    int32_t dbL0B = 0;
    int32_t dbL0C = 0;
    int32_t reserved = 0;
};

}  // namespace AscendC::tiling

#endif  // ASCEND_SIM_ASCEND_SIM_CUBE_TILING_H
