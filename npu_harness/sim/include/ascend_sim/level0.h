// ascend_sim/level0.h - the vector mask register and the level-0 (mask + repeat) addressing shared by
// every level-0 API form (ref §4, §4.5; ref_next §4.1-§4.3).
//
// A level-0 call runs `repeatTime` repeats of 256 bytes (the widest operand's lanes: 128 b16 / 64 b32
// lanes); lane e of repeat r of an operand with element size es lives at
//     r * repStride * 32 + (e / (32 / es)) * blkStride * 32 + (e % (32 / es)) * es
// bytes from the operand's start. Normal mode: a 128-bit lane mask (the call's `mask` argument, or with
// isSetMask = false the register set by SetVectorMask). Counter mode (SetMaskCount): the mask is an
// element count over the whole call and the hardware derives the repeats (repeatTime is ignored).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_LEVEL0_H
#define ASCEND_SIM_ASCEND_SIM_LEVEL0_H

#include "tensor.h"

namespace AscendC {

enum class MaskMode : uint8_t { NORMAL = 0, COUNTER = 1 };
// The mask argument of a level-0 call with isSetMask = false (the register holds the mask).
inline constexpr uint64_t MASK_PLACEHOLDER = 0;
inline constexpr uint64_t MASK_PLACEHOLDER_LIST[2] = {0, 0};

// Mask register API (ref_next §4.3). Register writes on PIPE_S that need no pipe synchronisation.
inline void SetMaskCount(std::source_location loc = std::source_location::current()) {
    sim::detail::touch(loc);
    sim::detail::st().mask.counter = true;
}
inline void SetMaskNorm(std::source_location loc = std::source_location::current()) {
    sim::detail::touch(loc);
    sim::detail::st().mask.counter = false;
}
// Back to the default: every lane of a repeat (Normal mode value).
inline void ResetMask(std::source_location loc = std::source_location::current()) {
    sim::detail::touch(loc);
    sim::detail::VecMask& m = sim::detail::st().mask;
    m.hi = m.lo = ~0ull;
    m.explicitSet = false;
}

namespace sim::detail {
ASCEND_SIM_RT void set_vector_mask(uint32_t es, bool counterArg, uint64_t hi, uint64_t lo, const std::source_location& loc);
}

// Normal mode: lane bits (maskHigh: lanes 64..127, b16 only; maskLow: lanes 0..63). Counter mode
// (MaskMode::COUNTER, after SetMaskCount): maskLow = the element count, maskHigh = 0.
template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow, std::source_location loc = std::source_location::current()) {
    sim::detail::set_vector_mask(sizeof(T), mode == MaskMode::COUNTER, maskHigh, maskLow, loc);
}
// Normal mode: the first `len` lanes; counter mode: `len` elements.
template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(int32_t len, std::source_location loc = std::source_location::current()) {
    if (mode == MaskMode::COUNTER || sim::detail::st().mask.counter) {
        sim::detail::set_vector_mask(sizeof(T), true, 0, static_cast<uint64_t>(len < 0 ? 0 : len), loc);
        return;
    }
    const uint32_t n = len < 0 ? 0u : static_cast<uint32_t>(len);
    const uint64_t lo = n >= 64 ? ~0ull : ((1ull << n) - 1);
    const uint64_t hi = n >= 128 ? ~0ull : n > 64 ? ((1ull << (n - 64)) - 1) : 0;
    sim::detail::set_vector_mask(sizeof(T), false, hi, lo, loc);
}

enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };

namespace sim::detail {

inline constexpr int32_t kMaxRepeat = 255;  // MAX_REPEAT_TIMES (ref §4.5)

// The lanes one level-0 call touches.
struct L0Plan {
    uint32_t lanes = 0;     // lanes per repeat: 256 B of the widest operand (at most 128)
    int32_t repeats = 0;
    bool counter = false;   // Counter mode: the first `total` elements of the call
    uint64_t total = 0;
    uint64_t lo = 0, hi = 0;  // Normal mode lane bits
    int32_t lastLane = -1;    // highest active lane of a full repeat (-1: none)
    bool on(int32_t r, uint32_t e) const {
        if (counter) return uint64_t(r) * lanes + e < total;
        return e < 64 ? ((lo >> e) & 1u) : ((hi >> (e - 64)) & 1u);
    }
    uint32_t lanes_in(int32_t r) const {  // lanes to scan in repeat r (active ones are below this)
        if (counter) {
            const uint64_t left = total - uint64_t(r) * lanes;
            return left < lanes ? static_cast<uint32_t>(left) : lanes;
        }
        return static_cast<uint32_t>(lastLane + 1);
    }
    bool empty() const { return repeats == 0 || (!counter && lastLane < 0) || (counter && total == 0); }
};

// Resolves the mask of a level-0 call of element size `es` (the widest operand): the call's mask
// (isSetMask, continuous count or bit array `mask[0..1]`) or the register, in the register's mode.
// `repeatLimit`: repeatTime must lie in [0, 255] (REPEAT-RANGE) - all level-0 APIs but ReduceSum/Max/Min.
ASCEND_SIM_RT L0Plan l0_plan(const char* api, uint32_t es, bool isSetMask, const uint64_t* mask, bool continuous, int32_t repeatTime,
                             bool repeatLimit, const std::source_location& loc);

// One operand of a level-0 call: start, element size, block and repeat strides (32-B units).
struct L0Opnd {
    uint8_t* p;
    uint32_t es;
    uint32_t blk, rep;
};

inline uint64_t l0_off(const L0Opnd& o, int32_t r, uint32_t e) {
    const uint32_t perBlock = 32u / o.es;
    return uint64_t(r) * o.rep * 32 + uint64_t(e / perBlock) * o.blk * 32 + uint64_t(e % perBlock) * o.es;
}

// Bytes from the operand's start to the end of the furthest lane the call touches.
inline uint64_t l0_extent(const L0Plan& P, const L0Opnd& o) {
    if (P.empty()) return 0;
    uint64_t ext = 0;
    for (int32_t r = P.repeats - 1; r >= 0 && r >= P.repeats - 2; --r) {
        const uint32_t n = P.lanes_in(r);
        if (n == 0) continue;
        const uint64_t a = l0_off(o, r, n - 1) + o.es;
        const uint64_t b = n > 1 ? l0_off(o, r, (32u / o.es) - 1 < n - 1 ? (32u / o.es) - 1 : n - 1) + o.es : 0;
        ext = a > ext ? a : ext;
        ext = b > ext ? b : ext;
    }
    return ext;
}

// Operand check of a level-0 call (live, in this block's UB, aligned, the touched extent fits) and
// its record for the pipe-race check; returns the extent in bytes.
template <class T>
inline uint64_t l0_check(const char* api, const char* name, const LocalTensor<T>& t, const L0Plan& P, const L0Opnd& o, uint32_t align,
                         const std::source_location& loc) {
    const uint64_t ext = l0_extent(P, o);
    check_operand_aligned(api, name, t.sim_view(), (ext + sizeof(T) - 1) / sizeof(T), align, loc);
    return ext;
}

inline void l0_count(VecOp op, uint32_t es, int32_t repeats) {
    Counters& c = cnt();
    c.vecInstr[uint32_t(op)][size_class(es)] += 1;
    c.vecRepeats[uint32_t(op)][size_class(es)] += uint64_t(repeats);
}

// Element-wise level-0 core: for every active lane, d = f(a) (b == nullptr) or d = f(a, b); the
// destination element is defined iff the source elements are.
template <class D, class S, class F>
inline void l0_elementwise(const L0Plan& P, const L0Opnd& d, const L0Opnd& a, const L0Opnd* b, F f) {
    constexpr bool kBinary = std::is_invocable_v<F, const S&, const S&>;
    for (int32_t r = 0; r < P.repeats; ++r) {
        const uint32_t n = P.lanes_in(r);
        for (uint32_t e = 0; e < n; ++e) {
            if (!P.on(r, e)) continue;
            D* pd = reinterpret_cast<D*>(d.p + l0_off(d, r, e));
            const S* pa = reinterpret_cast<const S*>(a.p + l0_off(a, r, e));
            bool def = elem_def(pa, sizeof(S));
            if constexpr (kBinary) {
                const S* pb = reinterpret_cast<const S*>(b->p + l0_off(*b, r, e));
                def = def && elem_def(pb, sizeof(S));
                *pd = f(*pa, *pb);
            } else {
                *pd = f(*pa);
            }
            set_elem_def(pd, sizeof(D), def);
        }
    }
}

}  // namespace sim::detail

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_LEVEL0_H
