// ascend_sim/transdata.h - TransDataTo5HD (ref_next §3.7; CANN "TransDataTo5HD", atlasascendc_api_07_0200): the
// vector building block of NCHW -> NC1HWC0. One repeat reads 16 source blocks of 32 B (srcList[0..15], any UB
// addresses, 32-B aligned) and, for 16-bit types, writes destination block j = element j of every source block
// (a 16 x 16 transpose of half / bf16 / int16 / uint16). Repeat r moves every address by r x the rep stride (32-B
// units); with repeatTimes == 1 the strides are still added once (the documented quirk: "with repeat_times 1
// the effective start is the list start plus the rep stride"), so callers pass 0 then.
// Emulated forms: the LocalTensor array form and the uint64_t address form (addresses from GetPhyAddr; each
// must point into this block's UB). Only 16-bit types are emulated: the 32-bit form (two destination blocks per
// position) and the 8-bit form (dstHighHalf / srcHighHalf halves) are reported UNSUPPORTED rather than guessed.
// PIPE_V; counted as one instruction of `repeatTimes` repeats (vec op TransDataTo5HD, 2 cycles per repeat:
// ASSUMPTION, cost model default).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_TRANSDATA_H
#define ASCEND_SIM_ASCEND_SIM_TRANSDATA_H

#include "level0.h"

namespace AscendC {

inline constexpr uint32_t NCHW_CONV_ADDR_LIST_SIZE = 16;

struct TransDataTo5HDParams {
    TransDataTo5HDParams() {}
    TransDataTo5HDParams(const bool dstHighHalfIn, const bool srcHighHalfIn, const uint8_t repeatTimesIn, const uint16_t dstRepStrideIn,
                         const uint16_t srcRepStrideIn)
        : dstHighHalf(dstHighHalfIn), srcHighHalf(srcHighHalfIn), repeatTimes(repeatTimesIn), dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn) {}
    bool dstHighHalf = false;  // 8-bit types only
    bool srcHighHalf = false;  // 8-bit types only
    uint8_t repeatTimes = 1;   // [0, 255]; 0: no-op
    uint16_t dstRepStride = 0;  // 32-B blocks between the destination addresses of consecutive repeats
    uint16_t srcRepStride = 0;  // the same for the source addresses
};

namespace sim::detail {

// The 16 x 16 b16 transpose over `repeatTimes` repeats: dst[j] block of repeat r = element j of every src block.
// `d` / `s` are the 16 destination / source byte addresses (already checked).
inline void trans5hd_b16(uint8_t* const d[16], const uint8_t* const s[16], const TransDataTo5HDParams& p, const std::source_location& loc) {
    const uint32_t reps = p.repeatTimes;
    uint16_t vals[16][16];
    bool defs[16][16];
    for (uint32_t r = 0; r < reps; ++r) {
        const uint64_t step = reps == 1 ? 1 : r;
        const uint8_t* src[16];
        uint8_t* dst[16];
        for (uint32_t i = 0; i < 16; ++i) {
            src[i] = s[i] + step * p.srcRepStride * 32;
            dst[i] = d[i] + step * p.dstRepStride * 32;
        }
        // read the whole repeat first: a destination block may be one of its own source blocks (in place)
        for (uint32_t i = 0; i < 16; ++i) {
            for (uint32_t j = 0; j < 16; ++j) {
                std::memcpy(&vals[i][j], src[i] + 2 * j, 2);
                defs[i][j] = elem_def(src[i] + 2 * j, 2);
            }
        }
        if (race_on()) {  // 16 scattered source and 16 destination blocks (more than a RaceOp records)
            RaceAccess acc[32];
            for (uint32_t i = 0; i < 16; ++i) {
                const uintptr_t a = reinterpret_cast<uintptr_t>(src[i]), b = reinterpret_cast<uintptr_t>(dst[i]);
                acc[i] = RaceAccess{a, a + 32, false};
                acc[16 + i] = RaceAccess{b, b + 32, true};
            }
            race_instr_n(Pipe::V, "TransDataTo5HD", loc, acc, 32);
        }
        for (uint32_t j = 0; j < 16; ++j) {
            for (uint32_t i = 0; i < 16; ++i) {
                std::memcpy(dst[j] + 2 * i, &vals[i][j], 2);
                set_elem_def(dst[j] + 2 * i, 2, defs[i][j]);
            }
        }
    }
}

template <typename T>
inline void trans5hd_types(const TransDataTo5HDParams& p, const std::source_location& loc) {
    static_assert(is_any_of_v<T, int8_t, uint8_t, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>,
                  "AscendC::TransDataTo5HD: unsupported dtype (A2: int8, uint8, int16, uint16, half, int32, uint32, float)");
    touch(loc);
    if constexpr (sizeof(T) != 2) {
        fatal("UNSUPPORTED", loc, "TransDataTo5HD with %u-byte elements (the 32-bit form writes two blocks per position, the 8-bit "
              "form block halves) is not emulated; use a 16-bit type", unsigned(sizeof(T)));
    }
    if (p.dstHighHalf || p.srcHighHalf) {
        fatal("PARAM-RANGE", loc, "TransDataTo5HD: dstHighHalf / srcHighHalf apply to 8-bit types only");
    }
}

// Bytes spanned by one list entry over all repeats (its first block to the end of its last).
inline uint64_t trans5hd_extent(const TransDataTo5HDParams& p, uint16_t repStride) {
    const uint64_t last = p.repeatTimes == 1 ? 1 : uint64_t(p.repeatTimes) - 1;
    return last * repStride * 32 + 32;
}

}  // namespace sim::detail

// LocalTensor array form: entry i is a block address (the tensor's start); each must stay inside its tensor over
// all repeats.
template <typename T>
inline void TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE], const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE],
                           const TransDataTo5HDParams& nchwconvParams, std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    trans5hd_types<T>(nchwconvParams, loc);
    if (nchwconvParams.repeatTimes == 0) return;
    const uint64_t dExt = trans5hd_extent(nchwconvParams, nchwconvParams.dstRepStride);
    const uint64_t sExt = trans5hd_extent(nchwconvParams, nchwconvParams.srcRepStride);
    uint8_t* d[16];
    const uint8_t* s[16];
    for (uint32_t i = 0; i < 16; ++i) {
        check_operand("TransDataTo5HD", "dstList[i]", dstList[i].sim_view(), dExt / sizeof(T), loc);
        check_operand("TransDataTo5HD", "srcList[i]", srcList[i].sim_view(), sExt / sizeof(T), loc);
        d[i] = reinterpret_cast<uint8_t*>(dstList[i].sim_ptr);
        s[i] = reinterpret_cast<const uint8_t*>(srcList[i].sim_ptr);
    }
    l0_count(VecOp::TransDataTo5HD, sizeof(T), nchwconvParams.repeatTimes);
    trans5hd_b16(d, s, nchwconvParams, loc);
}

// Address form (the faster one on hardware): dstList / srcList hold UB addresses (LocalTensor::GetPhyAddr). The
// emulator checks that every block of every repeat lies inside this block's UB and is 32-B aligned; it cannot
// tell which buffer an address belongs to, so a block running into a neighbouring buffer is not reported here.
template <typename T>
inline void TransDataTo5HD(uint64_t dstList[NCHW_CONV_ADDR_LIST_SIZE], uint64_t srcList[NCHW_CONV_ADDR_LIST_SIZE],
                           const TransDataTo5HDParams& nchwconvParams, std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    trans5hd_types<T>(nchwconvParams, loc);
    if (nchwconvParams.repeatTimes == 0) return;
    const uint8_t* ub = st().ub;
    auto check = [&](const char* name, uint32_t i, uint64_t addr, uint64_t ext) {
        const uint8_t* p = reinterpret_cast<const uint8_t*>(addr);
        if (ub == nullptr || p < ub || p + ext > ub + ASCEND_SIM_UB_BYTES) {
            fatal("UB-OOB", loc, "TransDataTo5HD: %s[%u] (with %llu bytes over its repeats) is not inside this block's UB", name, i,
                  static_cast<unsigned long long>(ext));
        }
        if ((p - ub) % 32 != 0) {
            fatal("UB-ALIGN", loc, "TransDataTo5HD: %s[%u] is at UB byte offset %llu, not 32-byte aligned", name, i,
                  static_cast<unsigned long long>(p - ub));
        }
    };
    const uint64_t dExt = trans5hd_extent(nchwconvParams, nchwconvParams.dstRepStride);
    const uint64_t sExt = trans5hd_extent(nchwconvParams, nchwconvParams.srcRepStride);
    uint8_t* d[16];
    const uint8_t* s[16];
    for (uint32_t i = 0; i < 16; ++i) {
        check("dstList", i, dstList[i], dExt);
        check("srcList", i, srcList[i], sExt);
        d[i] = reinterpret_cast<uint8_t*>(dstList[i]);
        s[i] = reinterpret_cast<const uint8_t*>(srcList[i]);
    }
    l0_count(VecOp::TransDataTo5HD, sizeof(T), nchwconvParams.repeatTimes);
    trans5hd_b16(d, s, nchwconvParams, loc);
}

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_TRANSDATA_H
