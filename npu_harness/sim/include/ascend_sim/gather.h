// ascend_sim/gather.h - index, gather and sort APIs (ref_next §3): CreateVecIndex, Arange /
// ArithProgression, Gather, GatherMask, Brcb, Sort32, MrgSort (+ GetMrgSortResult), and the high-level
// Sort / Extract / Concat with GetSortLen / GetSortOffset. All run on PIPE_V; operands in UB, 32-B aligned
// starts. The A2 (score, index) pair layout: 8 bytes per element, the score in the low 4 bytes (half: low 2
// bytes, 2 reserved), the uint32 index in the high 4 bytes; lists sort descending, ties keep the lower
// original position first.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_GATHER_H
#define ASCEND_SIM_ASCEND_SIM_GATHER_H

#include "vec.h"

namespace AscendC {

// ---- index generation ----------------------------------------------------------------------------------

// dst[i] = firstValue + i (A2: int16, half, int32, float; ref_next §3.4).
template <typename T>
inline void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count,
                           std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_any_of_v<T, int16_t, half, int32_t, float>, "AscendC::CreateVecIndex: unsupported dtype (A2: int16, half, int32, float)");
    check_vec_begin("CreateVecIndex", count, loc);
    check_operand("CreateVecIndex", "dst", dst.sim_view(), count, loc);
    count_vec(VecOp::CreateVecIndex, sizeof(T), count);
    race_v("CreateVecIndex", loc, dst.sim_ptr, uint64_t(count) * sizeof(T), nullptr, 0);
    const auto f = up(firstValue);
    for (uint32_t i = 0; i < count; ++i) dst.sim_ptr[i] = down<T>(f + static_cast<calc_t<T>>(i));
    set_def(dst.sim_ptr, uint64_t(count) * sizeof(T));
}

// dst[i] = firstValue + i * diffValue (half, float, int16, int32); diffValue >= 0 and count > 0. CANN 8.5
// name Arange, 8.0-8.3 name ArithProgression (ref_next §3.4). Each element is computed in one rounding.
template <typename T>
inline void Arange(const LocalTensor<T>& dst, const T firstValue, const T diffValue, const int32_t count,
                   std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_any_of_v<T, half, float, int16_t, int32_t>, "AscendC::Arange: unsupported dtype (half, float, int16, int32)");
    touch(loc);
    if (count <= 0) fatal("PARAM-RANGE", loc, "Arange: count = %d must be > 0", count);
    if (up(diffValue) < 0) fatal("PARAM-RANGE", loc, "Arange: diffValue must be >= 0");
    check_operand("Arange", "dst", dst.sim_view(), uint64_t(count), loc);
    count_vec(VecOp::Adds, sizeof(T), uint64_t(count));
    race_v("Arange", loc, dst.sim_ptr, uint64_t(count) * sizeof(T), nullptr, 0);
    const auto f = up(firstValue), d = up(diffValue);
    for (int32_t i = 0; i < count; ++i) dst.sim_ptr[i] = down<T>(f + static_cast<calc_t<T>>(i) * d);
    set_def(dst.sim_ptr, uint64_t(count) * sizeof(T));
}
template <typename T>
inline void ArithProgression(const LocalTensor<T>& dst, const T firstValue, const T diffValue, const int32_t count,
                             std::source_location loc = std::source_location::current()) {
    Arange(dst, firstValue, diffValue, count, loc);
}

// ---- gather ------------------------------------------------------------------------------------------

// dst[i] = the element at byte offset srcBaseAddr + srcOffset[i] of src (ref_next §3.1): offsets are
// bytes, multiples of sizeof(T), inside src's buffer. A2: (u)int16, (u)int32, half, bf16, float.
template <typename T>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset, const uint32_t srcBaseAddr,
                   const uint32_t count, std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_any_of_v<T, int16_t, uint16_t, int32_t, uint32_t, half, bfloat16_t, float>, "AscendC::Gather: unsupported dtype");
    check_vec_begin("Gather", count, loc);
    check_operand("Gather", "dst", dst.sim_view(), count, loc);
    check_operand("Gather", "srcOffset", srcOffset.sim_view(), count, loc);
    check_operand("Gather", "src", src.sim_view(), 0, loc);
    const uint64_t capBytes = uint64_t(src.sim_view().cap) * sizeof(T);
    const uint8_t* base = reinterpret_cast<const uint8_t*>(src.sim_ptr);
    uint64_t lo = ~0ull, hi = 0;
    for (uint32_t i = 0; i < count; ++i) {
        const uint64_t off = uint64_t(srcBaseAddr) + srcOffset.sim_ptr[i];
        if (off % sizeof(T) != 0) {
            fatal("PARAM-RANGE", loc, "Gather: srcOffset[%u] = %u (+ srcBaseAddr %u) is not a multiple of sizeof(T) = %u bytes", i,
                  srcOffset.sim_ptr[i], srcBaseAddr, unsigned(sizeof(T)));
        }
        if (off + sizeof(T) > capBytes) {
            fatal("UB-OOB", loc, "Gather: srcOffset[%u] = %u (+ srcBaseAddr %u) reads byte %llu of src, whose buffer has %llu bytes", i,
                  srcOffset.sim_ptr[i], srcBaseAddr, static_cast<unsigned long long>(off), static_cast<unsigned long long>(capBytes));
        }
        lo = off < lo ? off : lo;
        hi = off + sizeof(T) > hi ? off + sizeof(T) : hi;
    }
    count_vec(VecOp::Gather, sizeof(T), count);
    if (count == 0) return;
    {
        RaceOp r(Pipe::V, "Gather", loc);
        r.read(srcOffset.sim_ptr, uint64_t(count) * 4).read(base + lo, hi - lo).write(dst.sim_ptr, uint64_t(count) * sizeof(T));
    }
    for (uint32_t i = 0; i < count; ++i) {
        const uint8_t* p = base + srcBaseAddr + srcOffset.sim_ptr[i];
        std::memcpy(dst.sim_ptr + i, p, sizeof(T));
        set_elem_def(dst.sim_ptr + i, sizeof(T), elem_def(p, sizeof(T)) && elem_def(srcOffset.sim_ptr + i, 4));
    }
}

struct GatherMaskParams {
    GatherMaskParams() {}
    GatherMaskParams(const uint8_t src0BlockStrideIn, const uint16_t repeatTimesIn, const uint16_t src0RepeatStrideIn,
                     const uint8_t src1RepeatStrideIn)
        : src0BlockStride(src0BlockStrideIn), repeatTimes(repeatTimesIn), src0RepeatStride(src0RepeatStrideIn),
          src1RepeatStride(src1RepeatStrideIn) {}
    uint8_t src0BlockStride = 1;
    uint16_t repeatTimes = 0;
    uint16_t src0RepeatStride = 0;
    uint8_t src1RepeatStride = 0;
};

namespace sim::detail {

// Selected elements of src0 packed to the front of dst (ref_next §3.2). bit(r, e) says whether lane e of
// repeat r is kept; Normal mode: 256 B per repeat; Counter mode (reduceMode): `mask` lanes per repeat.
template <class T, class Bit>
inline void gather_mask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, bool reduceMode, uint32_t mask, const GatherMaskParams& p,
                        uint64_t& rsvdCnt, const std::source_location& loc, Bit bit, const void* patPtr, uint64_t patBytes) {
    touch(loc);
    const uint32_t lanesFull = 256 / sizeof(T);
    const uint32_t lanes = reduceMode ? mask : lanesFull;
    if (reduceMode && (mask == 0 || mask > lanesFull)) {
        fatal("PARAM-RANGE", loc, "GatherMask: in Counter mode (reduceMode) mask = %u must be in [1, %u] elements per repeat", mask,
              lanesFull);
    }
    const L0Opnd s{reinterpret_cast<uint8_t*>(src0.sim_ptr), sizeof(T), p.src0BlockStride, p.src0RepeatStride};
    L0Plan P;
    P.lanes = lanesFull;
    P.repeats = p.repeatTimes;
    P.counter = true;
    P.total = uint64_t(p.repeatTimes) * lanesFull;  // extent: whole repeats (the last lane read is lanes-1)
    P.lastLane = lanes ? int32_t(lanes) - 1 : -1;
    const uint64_t es = p.repeatTimes ? l0_extent(P, s) : 0;
    check_operand("GatherMask", "src0", src0.sim_view(), (es + sizeof(T) - 1) / sizeof(T), loc);
    uint64_t kept = 0;
    for (uint32_t r = 0; r < p.repeatTimes; ++r)
        for (uint32_t e = 0; e < lanes; ++e) kept += bit(r, e) ? 1 : 0;
    check_operand("GatherMask", "dst", dst.sim_view(), kept, loc);
    count_vec(VecOp::GatherMask, sizeof(T), uint64_t(p.repeatTimes) * lanesFull);
    {
        RaceOp r(Pipe::V, "GatherMask", loc);
        r.read(s.p, es).read(patPtr, patBytes).write(dst.sim_ptr, kept * sizeof(T));
    }
    uint64_t k = 0;
    for (uint32_t r = 0; r < p.repeatTimes; ++r) {
        for (uint32_t e = 0; e < lanes; ++e) {
            if (!bit(r, e)) continue;
            const uint8_t* sp = s.p + l0_off(s, int32_t(r), e);
            std::memcpy(dst.sim_ptr + k, sp, sizeof(T));
            set_elem_def(dst.sim_ptr + k, sizeof(T), elem_def(sp, sizeof(T)));
            ++k;
        }
    }
    rsvdCnt = kept;
}

}  // namespace sim::detail

// Pattern tensor form: bit e of the pattern (consumed continuously within a repeat, advanced by
// src1RepeatStride 32-B blocks between repeats) keeps lane e. A2: (int16|uint16|half|bf16, uint16) and
// (int32|uint32|float, uint32).
template <typename T, typename U>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& src1Pattern, const bool reduceMode,
                       const uint32_t mask, const GatherMaskParams& gatherMaskParams, uint64_t& rsvdCnt,
                       std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(sizeof(T) == sizeof(U) && (sizeof(T) == 2 || sizeof(T) == 4), "AscendC::GatherMask: pattern element size must match T");
    const uint8_t* pat = reinterpret_cast<const uint8_t*>(src1Pattern.sim_ptr);
    const uint32_t lanes = reduceMode ? mask : 256u / sizeof(T);
    const uint64_t patBytes = (uint64_t(gatherMaskParams.repeatTimes ? gatherMaskParams.repeatTimes - 1 : 0) * gatherMaskParams.src1RepeatStride *
                               32) + (lanes + 7) / 8;
    check_operand("GatherMask", "src1Pattern", src1Pattern.sim_view(), (patBytes + sizeof(U) - 1) / sizeof(U), loc);
    const uint32_t stride = gatherMaskParams.src1RepeatStride;
    gather_mask(dst, src0, reduceMode, mask, gatherMaskParams, rsvdCnt, loc,
                [pat, stride](uint32_t r, uint32_t e) { return ((pat[uint64_t(r) * stride * 32 + e / 8] >> (e % 8)) & 1u) != 0; }, pat,
                patBytes);
}

// Built-in pattern form: 1 even lanes, 2 odd lanes, 3/4/5/6 the 1st/2nd/3rd/4th of every four, 7 all.
template <typename T>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern, const bool reduceMode,
                       const uint32_t mask, const GatherMaskParams& gatherMaskParams, uint64_t& rsvdCnt,
                       std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    if (src1Pattern < 1 || src1Pattern > 7) {
        touch(loc);
        fatal("PARAM-RANGE", loc, "GatherMask: built-in pattern %u is not in [1, 7]", unsigned(src1Pattern));
    }
    const uint32_t pt = src1Pattern;
    gather_mask(dst, src0, reduceMode, mask, gatherMaskParams, rsvdCnt, loc,
                [pt](uint32_t, uint32_t e) {
                    switch (pt) {
                        case 1: return e % 2 == 0;
                        case 2: return e % 2 == 1;
                        case 3: case 4: case 5: case 6: return e % 4 == pt - 3;
                        default: return true;
                    }
                },
                nullptr, 0);
}

// ---- Brcb: one source element broadcast to a 32-B block ------------------------------------------------------

struct BrcbRepeatParams {
    BrcbRepeatParams() {}
    BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn) : dstBlkStride(dstBlkStrideIn), dstRepStride(dstRepStrideIn) {}
    uint16_t dstBlkStride = 1;
    uint16_t dstRepStride = 8;
};

// Each repeat reads 8 source elements and fills 8 destination blocks of 32 B, block j with element j
// (dstBlkStride 0 counts as 1) (ref_next §3.4).
template <typename T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTime, const BrcbRepeatParams& repeatParams,
                 std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_any_of_v<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>, "AscendC::Brcb: unsupported dtype");
    touch(loc);
    const uint32_t blk = repeatParams.dstBlkStride ? repeatParams.dstBlkStride : 1;
    const uint32_t perBlock = 32 / sizeof(T);
    if (repeatTime == 0) return;
    const uint64_t dstBytes = (uint64_t(repeatTime) - 1) * repeatParams.dstRepStride * 32 + 7ull * blk * 32 + 32;
    check_operand("Brcb", "src", src.sim_view(), uint64_t(repeatTime) * 8, loc);
    check_operand("Brcb", "dst", dst.sim_view(), (dstBytes + sizeof(T) - 1) / sizeof(T), loc);
    l0_count(VecOp::Brcb, sizeof(T), repeatTime);
    race_v("Brcb", loc, dst.sim_ptr, dstBytes, src.sim_ptr, uint64_t(repeatTime) * 8 * sizeof(T));
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.sim_ptr);
    for (uint32_t r = 0; r < repeatTime; ++r) {
        for (uint32_t j = 0; j < 8; ++j) {
            const T v = src.sim_ptr[r * 8 + j];
            const bool def = elem_def(src.sim_ptr + r * 8 + j, sizeof(T));
            T* b = reinterpret_cast<T*>(d + (uint64_t(r) * repeatParams.dstRepStride + uint64_t(j) * blk) * 32);
            for (uint32_t k = 0; k < perBlock; ++k) b[k] = v;
            if (def) set_def(b, 32);
            else clear_def(b, 32);
        }
    }
}

// ---- sorting (A2: Sort32 + MrgSort; ref_next §3.5) -----------------------------------------------------------

namespace sim::detail {

template <class T>
struct SortPair {
    float score;
    uint32_t index;
};

template <class T>
inline SortPair<T> load_pair(const uint8_t* p) {
    T s;
    std::memcpy(&s, p, sizeof(T));
    uint32_t idx;
    std::memcpy(&idx, p + 4, 4);
    return SortPair<T>{static_cast<float>(up(s)), idx};
}

template <class T>
inline void store_pair(uint8_t* p, const SortPair<T>& x) {
    std::memset(p, 0, 8);
    const T s = down<T>(x.score);
    std::memcpy(p, &s, sizeof(T));
    std::memcpy(p + 4, &x.index, 4);
}

// Stable descending sort of n pairs (insertion into a merge sort; <algorithm> is not included).
template <class T>
inline void sort_desc(SortPair<T>* a, uint32_t n) {
    std::vector<SortPair<T>> tmp(n);
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            const uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = a[j].score > a[i].score ? a[j++] : a[i++];
            while (i < mid) tmp[k++] = a[i++];
            while (j < hi) tmp[k++] = a[j++];
        }
        for (uint32_t k = 0; k < n; ++k) a[k] = tmp[k];
    }
}

}  // namespace sim::detail

// Sorts each repeat's 32 scores of src0 descending, carrying the uint32 indices of src1; dst gets 32
// (score, index) pairs of 8 bytes per repeat. A2 only; T = half or float.
template <typename T>
inline void Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1, const int32_t repeatTime,
                   std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_any_of_v<T, half, float>, "AscendC::Sort32: T must be half or float");
    touch(loc);
    if (repeatTime < 0 || repeatTime > kMaxRepeat) {
        fatal("REPEAT-RANGE", loc, "Sort32: repeatTime = %d is out of range [0, %d]", repeatTime, kMaxRepeat);
    }
    const uint64_t n = uint64_t(repeatTime) * 32;
    check_operand("Sort32", "src0", src0.sim_view(), n, loc);
    check_operand("Sort32", "src1", src1.sim_view(), n, loc);
    check_operand("Sort32", "dst", dst.sim_view(), n * 8 / sizeof(T), loc);
    l0_count(VecOp::Sort32, sizeof(T), repeatTime);
    if (n == 0) return;
    race_v("Sort32", loc, dst.sim_ptr, n * 8, src0.sim_ptr, n * sizeof(T), src1.sim_ptr, n * 4);
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.sim_ptr);
    for (int32_t r = 0; r < repeatTime; ++r) {
        SortPair<T> a[32];
        bool def = true;
        for (uint32_t i = 0; i < 32; ++i) {
            a[i] = SortPair<T>{static_cast<float>(up(src0.sim_ptr[r * 32 + i])), src1.sim_ptr[r * 32 + i]};
            def = def && elem_def(src0.sim_ptr + r * 32 + i, sizeof(T)) && elem_def(src1.sim_ptr + r * 32 + i, 4);
        }
        sort_desc(a, 32);
        for (uint32_t i = 0; i < 32; ++i) store_pair(d + (uint64_t(r) * 32 + i) * 8, a[i]);
        if (def) set_def(d + uint64_t(r) * 256, 256);
        else clear_def(d + uint64_t(r) * 256, 256);
    }
}

template <typename T>
struct MrgSortSrcList {
    MrgSortSrcList() {}
    MrgSortSrcList(const LocalTensor<T>& s1, const LocalTensor<T>& s2, const LocalTensor<T>& s3, const LocalTensor<T>& s4)
        : src1(s1), src2(s2), src3(s3), src4(s4) {}
    LocalTensor<T> src1, src2, src3, src4;
};

struct MrgSort4Info {
    MrgSort4Info() {}
    MrgSort4Info(const uint16_t elementLengthsIn[4], const bool ifExhaustedSuspensionIn, const uint16_t validBitIn,
                 const uint16_t repeatTimesIn)
        : ifExhaustedSuspension(ifExhaustedSuspensionIn), validBit(validBitIn), repeatTimes(repeatTimesIn) {
        for (int i = 0; i < 4; ++i) elementLengths[i] = elementLengthsIn[i];
    }
    uint16_t elementLengths[4] = {0, 0, 0, 0};
    bool ifExhaustedSuspension = false;
    uint16_t validBit = 0;
    uint16_t repeatTimes = 1;
};

namespace sim::detail {
inline uint16_t g_mrgSortCounts[4] = {0, 0, 0, 0};  // GetMrgSortResult (per thread of the last MrgSort)
}

// Merges 2-4 descending lists of (score, index) pairs (validBit 3 / 7 / 15) into dst (A2). With
// ifExhaustedSuspension the merge stops when a list runs out. repeatTimes > 1: 4 equal contiguous lists
// starting at src1, repeated (validBit 15, no suspension).
template <typename T>
inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& src, const MrgSort4Info& params,
                    std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_any_of_v<T, half, float>, "AscendC::MrgSort: T must be half or float");
    touch(loc);
    const uint32_t lists = params.validBit == 3 ? 2 : params.validBit == 7 ? 3 : params.validBit == 15 ? 4 : 0;
    if (!lists) fatal("PARAM-RANGE", loc, "MrgSort: validBit = %u must be 3, 7 or 15 (2, 3 or 4 lists)", unsigned(params.validBit));
    for (uint32_t k = 0; k < 4; ++k) {
        if (params.elementLengths[k] > 4095) {
            fatal("PARAM-RANGE", loc, "MrgSort: elementLengths[%u] = %u exceeds 4095", k, unsigned(params.elementLengths[k]));
        }
    }
    const uint32_t reps = params.repeatTimes ? params.repeatTimes : 1;
    if (reps > 1 && (params.validBit != 15 || params.ifExhaustedSuspension || params.elementLengths[1] != params.elementLengths[0] ||
                     params.elementLengths[2] != params.elementLengths[0] || params.elementLengths[3] != params.elementLengths[0])) {
        fatal("PARAM-RANGE", loc, "MrgSort: repeatTimes > 1 needs 4 lists of equal length, validBit 15 and no exhausted suspension");
    }
    const LocalTensor<T>* srcs[4] = {&src.src1, &src.src2, &src.src3, &src.src4};
    uint64_t total = 0;
    for (uint32_t k = 0; k < lists; ++k) total += params.elementLengths[k];
    total *= reps;
    check_operand("MrgSort", "dst", dst.sim_view(), total * 8 / sizeof(T), loc);
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.sim_ptr);
    uint64_t written = 0;
    for (uint32_t rep = 0; rep < reps; ++rep) {
        const uint8_t* p[4];
        uint32_t len[4], pos[4] = {0, 0, 0, 0};
        for (uint32_t k = 0; k < lists; ++k) {
            len[k] = params.elementLengths[k];
            if (reps > 1) {
                p[k] = reinterpret_cast<const uint8_t*>(src.src1.sim_ptr) + (uint64_t(rep) * 4 + k) * len[0] * 8;
            } else {
                check_operand_aligned("MrgSort", "src", srcs[k]->sim_view(), uint64_t(len[k]) * 8 / sizeof(T), 8, loc);
                p[k] = reinterpret_cast<const uint8_t*>(srcs[k]->sim_ptr);
            }
        }
        if (reps > 1 && rep == 0) check_operand("MrgSort", "src1", src.src1.sim_view(), total * 8 / sizeof(T), loc);
        for (;;) {
            int best = -1;
            SortPair<T> bv{};
            bool exhausted = false;
            for (uint32_t k = 0; k < lists; ++k) {
                if (pos[k] >= len[k]) {
                    exhausted = true;
                    continue;
                }
                const SortPair<T> x = load_pair<T>(p[k] + uint64_t(pos[k]) * 8);
                if (best < 0 || x.score > bv.score) {  // ties: the earlier list first
                    best = int(k);
                    bv = x;
                }
            }
            if (best < 0 || (exhausted && params.ifExhaustedSuspension)) break;
            const uint8_t* sp = p[best] + uint64_t(pos[best]) * 8;
            std::memcpy(d + written * 8, sp, 8);
            std::memcpy(shadow(d + written * 8), shadow(sp), 8);
            ++pos[best];
            ++written;
        }
        for (uint32_t k = 0; k < 4; ++k) g_mrgSortCounts[k] = k < lists ? static_cast<uint16_t>(pos[k]) : 0;
    }
    count_vec(VecOp::MrgSort, sizeof(T), written * 8 / sizeof(T));  // 8-B pairs, counted as elements of T
    RaceOp op(Pipe::V, "MrgSort", loc);
    if (reps > 1) {
        op.read(src.src1.sim_ptr, total * 8);
    } else {
        for (uint32_t k = 0; k < lists; ++k) op.read(srcs[k]->sim_ptr, uint64_t(params.elementLengths[k]) * 8);
    }
    op.write(d, written * 8);
}

// How many pairs of each list the last MrgSort consumed (PIPE_S).
inline void GetMrgSortResult(uint16_t& mrgSortList1, uint16_t& mrgSortList2, uint16_t& mrgSortList3, uint16_t& mrgSortList4) {
    mrgSortList1 = sim::detail::g_mrgSortCounts[0];
    mrgSortList2 = sim::detail::g_mrgSortCounts[1];
    mrgSortList3 = sim::detail::g_mrgSortCounts[2];
    mrgSortList4 = sim::detail::g_mrgSortCounts[3];
}

// ---- high-level Sort (A2 layout) ----------------------------------------------------------------------------

// Elements of T that `elemCount` (score, index) pairs occupy, and the offset of pair `elemOffset`.
template <typename T>
inline uint32_t GetSortLen(const uint32_t elemCount) {
    return elemCount * 8 / sizeof(T);
}
template <typename T>
inline uint32_t GetSortOffset(const uint32_t elemOffset) {
    return elemOffset * 8 / sizeof(T);
}

// On A2 the scores need no region-proposal packing: Concat copies them (ref_next §3.5).
template <typename T>
inline void Concat(LocalTensor<T>& concatLocal, const LocalTensor<T>& srcLocal, const LocalTensor<T>& tmpLocal, const int32_t repeatTime,
                   std::source_location loc = std::source_location::current()) {
    (void)tmpLocal;
    DataCopy(concatLocal, srcLocal, static_cast<uint32_t>(repeatTime * 16), loc);
}

// Sorts 32 x repeatTime scores of `concat` descending with their indices into dst as pairs: each group
// of 32 (isFullSort false) or all of them (true).
template <typename T, bool isFullSort>
inline void Sort(const LocalTensor<T>& dst, const LocalTensor<T>& concat, const LocalTensor<uint32_t>& index, LocalTensor<T>& tmp,
                 const int32_t repeatTime, std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_any_of_v<T, half, float>, "AscendC::Sort: T must be half or float");
    Sort32(dst, concat, index, repeatTime, loc);
    if (!isFullSort || repeatTime <= 1) return;
    const uint64_t n = uint64_t(repeatTime) * 32;
    check_operand("Sort", "tmp", tmp.sim_view(), 0, loc);
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.sim_ptr);
    std::vector<SortPair<T>> all(n);
    for (uint64_t i = 0; i < n; ++i) all[i] = load_pair<T>(d + i * 8);
    sort_desc(all.data(), static_cast<uint32_t>(n));  // stable: equal scores keep their order (the earlier group first)
    for (uint64_t i = 0; i < n; ++i) store_pair(d + i * 8, all[i]);
    count_vec(VecOp::MrgSort, sizeof(T), n * 8 / sizeof(T));  // one merge pass of the 8-B pairs (the rounds are not counted)
    race_v("Sort", loc, d, n * 8, d, n * 8);
}

// Splits sorted pairs into scores and indices (repeatTime x 32 pairs).
template <typename T>
inline void Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& dstIndex, const LocalTensor<T>& sorted,
                    const int32_t repeatTime, std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    touch(loc);
    const uint64_t n = uint64_t(repeatTime < 0 ? 0 : repeatTime) * 32;
    check_operand("Extract", "sorted", sorted.sim_view(), n * 8 / sizeof(T), loc);
    check_operand("Extract", "dstValue", dstValue.sim_view(), n, loc);
    check_operand("Extract", "dstIndex", dstIndex.sim_view(), n, loc);
    count_vec(VecOp::GatherMask, sizeof(T), n);
    race_v("Extract", loc, dstValue.sim_ptr, n * sizeof(T), sorted.sim_ptr, n * 8, nullptr, 0);
    race_v("Extract", loc, dstIndex.sim_ptr, n * 4, sorted.sim_ptr, n * 8, nullptr, 0);
    const uint8_t* s = reinterpret_cast<const uint8_t*>(sorted.sim_ptr);
    for (uint64_t i = 0; i < n; ++i) {
        std::memcpy(dstValue.sim_ptr + i, s + i * 8, sizeof(T));
        std::memcpy(dstIndex.sim_ptr + i, s + i * 8 + 4, 4);
        const bool def = elem_def(s + i * 8, 8);
        set_elem_def(dstValue.sim_ptr + i, sizeof(T), def);
        set_elem_def(dstIndex.sim_ptr + i, 4, def);
    }
}

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_GATHER_H
