// ascend_sim/reduce.h - reductions: ReduceSum / ReduceMax / ReduceMin (count and level-0 forms),
// WholeReduceSum / WholeReduceMax / WholeReduceMin, BlockReduceSum / Max / Min, PairReduceSum (ref §4.3,
// ref_next §3.6, §4.4).
//
// Numerics (cannmirror/asc-devkit docs/api/context/ReduceSum.md, WholeReduceSum.md): inside one repeat the lanes are
// added as a binary tree (lane 2i + lane 2i+1, then pairs of those, ...), every partial sum rounded to
// T; for half a partial sum above 65504 is kept as 65504 (and below -65504 as -65504). The count form
// of ReduceSum then adds the per-repeat sums in order; the level-0 form reduces them again as a tree.
// Max / Min pick the first occurrence of the extreme value; an index is stored as the integer bit
// pattern of a T slot (uint16 for half, uint32 for float).
//
// sharedTmpBuffer sizes are the documented minimums (ReduceSum.md / ReduceMax.md), with firstMaxRepeat =
// count / elementsPerRepeat (at least 1) for the count forms and repeatTime for the level-0 forms:
//   ReduceSum:                   RoundUp(firstMaxRepeat, elementsPerBlock) elements
//   ReduceMax/Min, no index:     RoundUp(2 * firstMaxRepeat, elementsPerBlock)
//   ReduceMax/Min, with index:   the three rounds' outputs, each rounded up to whole 32-B blocks
// A smaller buffer is REDUCE-TMP.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_REDUCE_H
#define ASCEND_SIM_ASCEND_SIM_REDUCE_H

#include "vec.h"

namespace AscendC {

namespace sim::detail {

// a + b rounded to T; half saturates at +-65504 instead of overflowing to inf (ReduceSum.md).
template <class T>
inline float add_round(float a, float b) {
    float s = a + b;
    if constexpr (std::is_same_v<T, half>) {
        s = s > 65504.0f ? 65504.0f : s < -65504.0f ? -65504.0f : s;
        return static_cast<float>(half(s));
    } else if constexpr (std::is_same_v<T, bfloat16_t>) {
        return static_cast<float>(bfloat16_t(s));
    } else {
        return s;
    }
}

// Binary-tree sum of v[0, n) (n padded with zeros to a power of two), every partial sum rounded to T.
template <class T>
inline float tree_sum(float* v, uint32_t n) {
    if (n == 0) return 0.0f;
    uint32_t w = 1;
    while (w < n) w <<= 1;
    for (uint32_t i = n; i < w; ++i) v[i] = 0.0f;
    for (; w > 1; w >>= 1)
        for (uint32_t i = 0; i < w / 2; ++i) v[i] = add_round<T>(v[2 * i], v[2 * i + 1]);
    return v[0];
}

// The extreme value and its first position among v[0, n) (valid[i]: lane i takes part).
struct ExtremeAt {
    float value;
    uint32_t index;
    bool any;
};
template <bool kMax>
inline ExtremeAt extreme_of(const float* v, const bool* valid, uint32_t n) {
    ExtremeAt r{0.0f, 0, false};
    for (uint32_t i = 0; i < n; ++i) {
        if (valid && !valid[i]) continue;
        const bool better = !r.any || (kMax ? v[i] > r.value : v[i] < r.value) || (v[i] != v[i] && r.value == r.value);
        if (better) r = ExtremeAt{v[i], i, true};
    }
    return r;
}

template <class T>
inline T index_bits(uint64_t idx) {
    T out;
    if constexpr (sizeof(T) == 2) {
        const uint16_t b = static_cast<uint16_t>(idx);
        std::memcpy(&out, &b, 2);
    } else {
        const uint32_t b = static_cast<uint32_t>(idx);
        std::memcpy(&out, &b, 4);
    }
    return out;
}

inline uint64_t round_up_to(uint64_t v, uint64_t unit) { return (v + unit - 1) / unit * unit; }

// Documented minimum sharedTmpBuffer size in elements (see the file comment).
inline uint64_t reduce_tmp_need(bool sum, bool calIndex, uint64_t firstMaxRepeat, uint32_t es) {
    const uint64_t epb = 32 / es, epr = 256 / es;
    if (sum) return round_up_to(firstMaxRepeat, epb);
    const uint64_t out1 = firstMaxRepeat * 2;
    if (!calIndex) return round_up_to(out1, epb);
    const uint64_t out2 = (out1 + epr - 1) / epr * 2, out3 = (out2 + epr - 1) / epr * 2;
    return round_up_to(out1, epb) + round_up_to(out2, epb) + round_up_to(out3, epb);
}

template <class T>
inline void check_reduce_tmp(const char* api, const LocalTensor<T>& tmp, uint64_t need, uint64_t firstMaxRepeat,
                             const std::source_location& loc) {
    check_operand(api, "sharedTmpBuffer", tmp.sim_view(), 0, loc);
    if (tmp.sim_view().size < need) {
        fatal("REDUCE-TMP", loc,
              "%s: sharedTmpBuffer holds %u elements; the documented minimum for firstMaxRepeat = %llu is %llu elements (the "
              "first round's results rounded up to whole 32-byte blocks)",
              api, tmp.sim_view().size, static_cast<unsigned long long>(firstMaxRepeat), static_cast<unsigned long long>(need));
    }
}

// Count forms: src[0, count) in repeats of 256 B, the last one partial.
template <class T, int kKind /* 0 sum, 1 max, 2 min */>
inline void reduce_count(const char* api, VecOp op, const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& tmp,
                         int32_t count, bool calIndex, const std::source_location& loc) {
    check_vec_begin(api, count, loc);
    // dst only needs element alignment (ReduceSum.md: 2 B for half, 4 B for float); src and the scratch 32 B
    check_operand_aligned(api, "dst", dst.sim_view(), calIndex ? 2 : 1, sizeof(T), loc);
    check_operand(api, "src", src.sim_view(), uint64_t(count), loc);
    const uint64_t epr = kRepeatBytesV / sizeof(T);
    const uint64_t firstMaxRepeat = uint64_t(count) / epr ? uint64_t(count) / epr : 1;
    const uint64_t need = reduce_tmp_need(kKind == 0, calIndex, firstMaxRepeat, sizeof(T));
    check_reduce_tmp(api, tmp, need, firstMaxRepeat, loc);
    count_vec(op, sizeof(T), uint64_t(count));
    if (count == 0) return;
    {
        RaceOp r(Pipe::V, api, loc);
        r.read(src.sim_ptr, uint64_t(count) * sizeof(T)).write(tmp.sim_ptr, need * sizeof(T)).write(dst.sim_ptr, (calIndex ? 2 : 1) * sizeof(T));
    }
    const bool defined = all_def(src.sim_ptr, uint64_t(count) * sizeof(T));
    float v[128];
    float acc = 0.0f;
    ExtremeAt best{0.0f, 0, false};
    for (uint64_t r0 = 0; r0 < uint64_t(count); r0 += epr) {
        const uint32_t n = static_cast<uint32_t>(uint64_t(count) - r0 < epr ? uint64_t(count) - r0 : epr);
        for (uint32_t i = 0; i < n; ++i) v[i] = static_cast<float>(up(src.sim_ptr[r0 + i]));
        if constexpr (kKind == 0) {
            const float s = tree_sum<T>(v, n);
            acc = r0 == 0 ? s : add_round<T>(acc, s);  // per-repeat sums added in order (count form, ReduceSum.md)
        } else {
            const ExtremeAt e = extreme_of<kKind == 1>(v, nullptr, n);
            const bool better = !best.any || (kKind == 1 ? e.value > best.value : e.value < best.value);
            if (better) best = ExtremeAt{e.value, static_cast<uint32_t>(r0 + e.index), true};
        }
    }
    if constexpr (kKind == 0) {
        dst.sim_ptr[0] = down<T>(acc);
    } else {
        dst.sim_ptr[0] = down<T>(best.value);
        if (calIndex) {
            if (sizeof(T) == 2 && best.index > 65535) {
                report("PARAM-RANGE", loc, "%s: calIndex with half: the index %u of the result does not fit the 16-bit slot", api,
                       best.index);
            }
            dst.sim_ptr[1] = index_bits<T>(best.index);
        }
    }
    set_elem_def(dst.sim_ptr, sizeof(T), defined);
    if (calIndex) set_elem_def(dst.sim_ptr + 1, sizeof(T), defined);
    set_def(tmp.sim_ptr, need * sizeof(T));  // the hardware leaves partial results there
}

// Level-0 forms of ReduceSum / Max / Min: every repeat reduced as a tree, then the per-repeat results
// reduced again the same way in rounds of one repeat each (ReduceSum.md "方式一").
template <class T, int kKind>
inline void reduce_level0(const char* api, VecOp op, const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& tmp,
                          const uint64_t mask[], bool continuous, int32_t repeatTime, int32_t srcRepStride, bool calIndex,
                          const std::source_location& loc) {
    const L0Plan P = l0_plan(api, sizeof(T), true, mask, continuous, repeatTime, false, loc);
    check_operand_aligned(api, "dst", dst.sim_view(), calIndex ? 2 : 1, sizeof(T), loc);
    const uint64_t firstMaxRepeat = repeatTime > 0 ? uint64_t(repeatTime) : 1;
    const uint64_t need = reduce_tmp_need(kKind == 0, calIndex, firstMaxRepeat, sizeof(T));
    check_reduce_tmp(api, tmp, need, firstMaxRepeat, loc);
    if (P.empty()) return;
    const L0Opnd s{reinterpret_cast<uint8_t*>(src.sim_ptr), sizeof(T), 1, uint32_t(srcRepStride < 0 ? 0 : srcRepStride)};
    const uint64_t es = l0_check(api, "src", src, P, s, kUbAlign, loc);
    l0_count(op, sizeof(T), P.repeats);
    {
        RaceOp r(Pipe::V, api, loc);
        r.read(s.p, es).write(tmp.sim_ptr, need * sizeof(T)).write(dst.sim_ptr, (calIndex ? 2 : 1) * sizeof(T));
    }
    std::vector<float> level;
    std::vector<uint64_t> where;  // kKind != 0: position of each partial extreme
    bool defined = true;
    float v[128];
    bool valid[128];
    for (int32_t r = 0; r < P.repeats; ++r) {
        for (uint32_t e = 0; e < P.lanes; ++e) {
            valid[e] = P.on(r, e);
            v[e] = 0.0f;
            if (!valid[e]) continue;
            const T* p = reinterpret_cast<const T*>(s.p + l0_off(s, r, e));
            v[e] = static_cast<float>(up(*p));
            defined = defined && elem_def(p, sizeof(T));
        }
        if constexpr (kKind == 0) {
            level.push_back(tree_sum<T>(v, P.lanes));
        } else {
            const ExtremeAt x = extreme_of<kKind == 1>(v, valid, P.lanes);
            level.push_back(x.value);
            where.push_back(uint64_t(r) * P.lanes + x.index);
        }
    }
    while (level.size() > 1) {
        std::vector<float> next;
        std::vector<uint64_t> nextWhere;
        for (size_t i = 0; i < level.size(); i += P.lanes) {
            const uint32_t n = static_cast<uint32_t>(level.size() - i < P.lanes ? level.size() - i : P.lanes);
            for (uint32_t k = 0; k < n; ++k) v[k] = level[i + k];
            if constexpr (kKind == 0) {
                next.push_back(tree_sum<T>(v, n));
            } else {
                const ExtremeAt x = extreme_of<kKind == 1>(v, nullptr, n);
                next.push_back(x.value);
                nextWhere.push_back(where[i + x.index]);
            }
        }
        level.swap(next);
        where.swap(nextWhere);
    }
    dst.sim_ptr[0] = down<T>(level.empty() ? 0.0f : level[0]);
    set_elem_def(dst.sim_ptr, sizeof(T), defined);
    if (kKind != 0 && calIndex) {
        dst.sim_ptr[1] = index_bits<T>(where.empty() ? 0 : where[0]);
        set_elem_def(dst.sim_ptr + 1, sizeof(T), defined);
    }
    set_def(tmp.sim_ptr, need * sizeof(T));
}

}  // namespace sim::detail

#define ASCEND_SIM_REDUCE_TYPES(T) ::AscendC::sim::detail::is_any_of_v<T, half, float>

template <typename T, bool isSetMask = true>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, std::source_location loc = std::source_location::current()) {
    static_assert(ASCEND_SIM_REDUCE_TYPES(T), "AscendC::ReduceSum: unsupported dtype (A2: half, float)");
    sim::detail::reduce_count<T, 0>("ReduceSum", sim::detail::VecOp::ReduceSum, dst, src, sharedTmpBuffer, count, false, loc);
}

template <typename T, bool isSetMask = true>
inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, bool calIndex = false, std::source_location loc = std::source_location::current()) {
    static_assert(ASCEND_SIM_REDUCE_TYPES(T), "AscendC::ReduceMax: unsupported dtype (A2: half, float)");
    sim::detail::reduce_count<T, 1>("ReduceMax", sim::detail::VecOp::ReduceMax, dst, src, sharedTmpBuffer, count, calIndex, loc);
}

template <typename T, bool isSetMask = true>
inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, bool calIndex = false, std::source_location loc = std::source_location::current()) {
    static_assert(ASCEND_SIM_REDUCE_TYPES(T), "AscendC::ReduceMin: unsupported dtype (A2: half, float)");
    sim::detail::reduce_count<T, 2>("ReduceMin", sim::detail::VecOp::ReduceMin, dst, src, sharedTmpBuffer, count, calIndex, loc);
}

// Level-0 forms: (dst, src, sharedTmpBuffer, mask | mask[], repeatTime, srcRepStride[, calIndex]);
// repeatTime only has to fit int32 here (ReduceSum.md).
#define ASCEND_SIM_REDUCE_L0(NAME, KIND, INDEX_PARAM, INDEX_ARG)                                                                  \
    template <typename T>                                                                                                       \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,              \
                     const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride INDEX_PARAM,                     \
                     std::source_location loc = std::source_location::current()) {                                             \
        static_assert(ASCEND_SIM_REDUCE_TYPES(T), "AscendC::" #NAME ": unsupported dtype (A2: half, float)");                  \
        const uint64_t m[2] = {uint64_t(mask < 0 ? 0 : mask), 0};                                                              \
        sim::detail::reduce_level0<T, KIND>(#NAME, sim::detail::VecOp::NAME, dst, src, sharedTmpBuffer, m, true, repeatTime,   \
                                            srcRepStride, INDEX_ARG, loc);                                                      \
    }                                                                                                                           \
    template <typename T>                                                                                                       \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,              \
                     const uint64_t mask[], const int32_t repeatTime, const int32_t srcRepStride INDEX_PARAM,                   \
                     std::source_location loc = std::source_location::current()) {                                             \
        static_assert(ASCEND_SIM_REDUCE_TYPES(T), "AscendC::" #NAME ": unsupported dtype (A2: half, float)");                  \
        sim::detail::reduce_level0<T, KIND>(#NAME, sim::detail::VecOp::NAME, dst, src, sharedTmpBuffer, mask, false,           \
                                            repeatTime, srcRepStride, INDEX_ARG, loc);                                          \
    }

#define ASCEND_SIM_COMMA ,
ASCEND_SIM_REDUCE_L0(ReduceSum, 0, , false)
ASCEND_SIM_REDUCE_L0(ReduceMax, 1, ASCEND_SIM_COMMA bool calIndex = false, calIndex)
ASCEND_SIM_REDUCE_L0(ReduceMin, 2, ASCEND_SIM_COMMA bool calIndex = false, calIndex)
#undef ASCEND_SIM_COMMA
#undef ASCEND_SIM_REDUCE_L0

// ---- repeat reductions (CANN 8.x names; ref_next §4.4) ------------------------------------------------

namespace sim::detail {

// One result (or one (value, index) pair) per repeat: WholeReduceSum / Max / Min.
template <class T, int kKind>
inline void whole_reduce(const char* api, VecOp op, const LocalTensor<T>& dst, const LocalTensor<T>& src, bool isSetMask,
                         const uint64_t mask[], bool continuous, int32_t repeatTime, int32_t dstRepStride, int32_t srcBlkStride,
                         int32_t srcRepStride, ReduceOrder order, const std::source_location& loc) {
    const L0Plan P = l0_plan(api, sizeof(T), isSetMask, mask, continuous, repeatTime, true, loc);
    if (P.empty()) return;
    const L0Opnd s{reinterpret_cast<uint8_t*>(src.sim_ptr), sizeof(T), uint32_t(srcBlkStride), uint32_t(srcRepStride)};
    const uint64_t es = l0_check(api, "src", src, P, s, kUbAlign, loc);
    // dst: one element (sum / ONLY_VALUE), a pair, or a 4-byte index per repeat; dstRepStride in those units
    const bool pair = kKind != 0 && (order == ReduceOrder::ORDER_VALUE_INDEX || order == ReduceOrder::ORDER_INDEX_VALUE);
    const bool onlyIndex = kKind != 0 && order == ReduceOrder::ORDER_ONLY_INDEX;
    const uint64_t unit = onlyIndex ? 4 : (pair ? 2 : 1) * sizeof(T);
    const uint64_t dstBytes = uint64_t(P.repeats - 1) * uint64_t(dstRepStride) * unit + unit;
    check_operand_aligned(api, "dst", dst.sim_view(), (dstBytes + sizeof(T) - 1) / sizeof(T), sizeof(T), loc);
    l0_count(op, sizeof(T), P.repeats);
    race_v(api, loc, dst.sim_ptr, dstBytes, s.p, es);
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.sim_ptr);
    float v[128];
    bool valid[128];
    for (int32_t r = 0; r < P.repeats; ++r) {
        bool defined = true;
        for (uint32_t e = 0; e < P.lanes; ++e) {
            valid[e] = P.on(r, e);
            v[e] = 0.0f;
            if (!valid[e]) continue;
            const T* p = reinterpret_cast<const T*>(s.p + l0_off(s, r, e));
            v[e] = static_cast<float>(up(*p));
            defined = defined && elem_def(p, sizeof(T));
        }
        uint8_t* out = d + uint64_t(r) * uint64_t(dstRepStride) * unit;
        if constexpr (kKind == 0) {
            *reinterpret_cast<T*>(out) = down<T>(tree_sum<T>(v, P.lanes));
            set_elem_def(out, sizeof(T), defined);
        } else {
            const ExtremeAt x = extreme_of<kKind == 1>(v, valid, P.lanes);
            const T val = down<T>(x.value), idx = index_bits<T>(x.index);
            T* o = reinterpret_cast<T*>(out);
            switch (order) {
                case ReduceOrder::ORDER_VALUE_INDEX: o[0] = val, o[1] = idx; break;
                case ReduceOrder::ORDER_INDEX_VALUE: o[0] = idx, o[1] = val; break;
                case ReduceOrder::ORDER_ONLY_VALUE: o[0] = val; break;
                case ReduceOrder::ORDER_ONLY_INDEX: {
                    const uint32_t i32 = x.index;
                    std::memcpy(out, &i32, 4);
                    break;
                }
            }
            set_def(out, unit);
            if (!defined) clear_def(out, unit);
        }
    }
}

// One result per 32-B block of every repeat (BlockReduceSum / Max / Min: 8 per repeat) or per lane pair
// (PairReduceSum); dstRepStride in units of 8 elements (block) or 128 B (pair).
template <class T, int kKind, bool kPair>
inline void group_reduce(const char* api, VecOp op, const LocalTensor<T>& dst, const LocalTensor<T>& src, bool isSetMask,
                         const uint64_t mask[], bool continuous, int32_t repeatTime, int32_t dstRepStride, int32_t srcBlkStride,
                         int32_t srcRepStride, const std::source_location& loc) {
    const L0Plan P = l0_plan(api, sizeof(T), isSetMask, mask, continuous, repeatTime, true, loc);
    if (P.empty()) return;
    const L0Opnd s{reinterpret_cast<uint8_t*>(src.sim_ptr), sizeof(T), uint32_t(srcBlkStride), uint32_t(srcRepStride)};
    const uint64_t es = l0_check(api, "src", src, P, s, kUbAlign, loc);
    const uint32_t group = kPair ? 2u : 32u / sizeof(T);  // lanes per result
    const uint32_t results = P.lanes / group;
    const uint64_t repUnit = kPair ? 128 : 8 * sizeof(T);
    const uint64_t dstBytes = uint64_t(P.repeats - 1) * uint64_t(dstRepStride) * repUnit + uint64_t(results) * sizeof(T);
    check_operand_aligned(api, "dst", dst.sim_view(), (dstBytes + sizeof(T) - 1) / sizeof(T), kPair ? kUbAlign : sizeof(T), loc);
    l0_count(op, sizeof(T), P.repeats);
    race_v(api, loc, dst.sim_ptr, dstBytes, s.p, es);
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.sim_ptr);
    float v[128];
    bool valid[128];
    for (int32_t r = 0; r < P.repeats; ++r) {
        T* out = reinterpret_cast<T*>(d + uint64_t(r) * uint64_t(dstRepStride) * repUnit);
        for (uint32_t g = 0; g < results; ++g) {
            bool any = false, defined = true;
            for (uint32_t k = 0; k < group; ++k) {
                const uint32_t e = g * group + k;
                valid[k] = P.on(r, e);
                v[k] = 0.0f;
                if (!valid[k]) continue;
                any = true;
                const T* p = reinterpret_cast<const T*>(s.p + l0_off(s, r, e));
                v[k] = static_cast<float>(up(*p));
                defined = defined && elem_def(p, sizeof(T));
            }
            if (!any) continue;  // no active lane: the result slot is left alone
            if constexpr (kKind == 0) {
                out[g] = down<T>(tree_sum<T>(v, group));
            } else {
                out[g] = down<T>(extreme_of<kKind == 1>(v, valid, group).value);
            }
            set_elem_def(out + g, sizeof(T), defined);
        }
    }
}

}  // namespace sim::detail

#define ASCEND_SIM_WHOLE_REDUCE(NAME, KIND, ORDER_PARAM, ORDER_ARG)                                                              \
    template <typename T, bool isSetMask = true>                                                                                \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTime,      \
                     const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride ORDER_PARAM,            \
                     std::source_location loc = std::source_location::current()) {                                             \
        static_assert(ASCEND_SIM_REDUCE_TYPES(T), "AscendC::" #NAME ": unsupported dtype (A2: half, float)");                  \
        const uint64_t m[2] = {uint64_t(mask < 0 ? 0 : mask), 0};                                                              \
        sim::detail::whole_reduce<T, KIND>(#NAME, sim::detail::VecOp::NAME, dst, src, isSetMask, m, true, repeatTime,          \
                                           dstRepStride, srcBlkStride, srcRepStride, ORDER_ARG, loc);                          \
    }                                                                                                                           \
    template <typename T, bool isSetMask = true>                                                                                \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const int32_t repeatTime,   \
                     const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride ORDER_PARAM,            \
                     std::source_location loc = std::source_location::current()) {                                             \
        static_assert(ASCEND_SIM_REDUCE_TYPES(T), "AscendC::" #NAME ": unsupported dtype (A2: half, float)");                  \
        sim::detail::whole_reduce<T, KIND>(#NAME, sim::detail::VecOp::NAME, dst, src, isSetMask, mask, false, repeatTime,      \
                                           dstRepStride, srcBlkStride, srcRepStride, ORDER_ARG, loc);                          \
    }

#define ASCEND_SIM_COMMA ,
ASCEND_SIM_WHOLE_REDUCE(WholeReduceSum, 0, , ReduceOrder::ORDER_ONLY_VALUE)
ASCEND_SIM_WHOLE_REDUCE(WholeReduceMax, 1, ASCEND_SIM_COMMA ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, order)
ASCEND_SIM_WHOLE_REDUCE(WholeReduceMin, 2, ASCEND_SIM_COMMA ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, order)
#undef ASCEND_SIM_COMMA
#undef ASCEND_SIM_WHOLE_REDUCE

// (dst, src, repeatTime, mask | mask[], dstRepStride, srcBlkStride, srcRepStride): note repeatTime before mask.
#define ASCEND_SIM_GROUP_REDUCE(NAME, KIND, PAIR)                                                                               \
    template <typename T, bool isSetMask = true>                                                                                \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const int32_t mask,      \
                     const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,                        \
                     std::source_location loc = std::source_location::current()) {                                             \
        static_assert(ASCEND_SIM_REDUCE_TYPES(T), "AscendC::" #NAME ": unsupported dtype (A2: half, float)");                  \
        const uint64_t m[2] = {uint64_t(mask < 0 ? 0 : mask), 0};                                                              \
        sim::detail::group_reduce<T, KIND, PAIR>(#NAME, sim::detail::VecOp::NAME, dst, src, isSetMask, m, true, repeatTime,    \
                                                 dstRepStride, srcBlkStride, srcRepStride, loc);                               \
    }                                                                                                                           \
    template <typename T, bool isSetMask = true>                                                                                \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const uint64_t mask[],   \
                     const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,                        \
                     std::source_location loc = std::source_location::current()) {                                             \
        static_assert(ASCEND_SIM_REDUCE_TYPES(T), "AscendC::" #NAME ": unsupported dtype (A2: half, float)");                  \
        sim::detail::group_reduce<T, KIND, PAIR>(#NAME, sim::detail::VecOp::NAME, dst, src, isSetMask, mask, false,            \
                                                 repeatTime, dstRepStride, srcBlkStride, srcRepStride, loc);                   \
    }

ASCEND_SIM_GROUP_REDUCE(BlockReduceSum, 0, false)
ASCEND_SIM_GROUP_REDUCE(BlockReduceMax, 1, false)
ASCEND_SIM_GROUP_REDUCE(BlockReduceMin, 2, false)
ASCEND_SIM_GROUP_REDUCE(PairReduceSum, 0, true)
#undef ASCEND_SIM_GROUP_REDUCE
#undef ASCEND_SIM_REDUCE_TYPES

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_REDUCE_H
