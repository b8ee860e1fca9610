// ascend_sim/impl/vec_rt.h - runtime definitions of vec.h (definedness propagation, level-0 masks).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_IMPL_VEC_RT_H
#define ASCEND_SIM_ASCEND_SIM_IMPL_VEC_RT_H

namespace AscendC::sim::detail {

// dst element i is defined iff element i of every source is (element sizes may differ: Cast).
ASCEND_SIM_RT void prop_defined(const void* d, uint32_t dEs, const void* a, uint32_t aEs, const void* b, uint32_t bEs, uint64_t n) {
    if (n == 0) return;
    if (all_def(a, n * aEs) && (b == nullptr || all_def(b, n * bEs))) {
        // in place (dst is a source of the same element size): already marked defined
        if (!((d == a && dEs == aEs) || (d == b && dEs == bEs))) set_def(d, n * dEs);
        return;
    }
    const uint8_t* pa = static_cast<const uint8_t*>(a);
    const uint8_t* pb = static_cast<const uint8_t*>(b);
    const uint8_t* pd = static_cast<const uint8_t*>(d);
    for (uint64_t i = 0; i < n; ++i) {
        const bool def = elem_def(pa + i * aEs, aEs) && (pb == nullptr || elem_def(pb + i * bEs, bEs));
        set_elem_def(pd + i * dEs, dEs, def);
    }
}

ASCEND_SIM_RT void report_f16_overflow(const char* api, uint64_t index, const std::source_location& loc) {
    report("FP16-OVERFLOW", loc,
           "%s: element %llu of the half result is infinite although its inputs are finite: the value overflowed the half range "
           "(65504); compute in float (Cast) or rescale",
           api, static_cast<unsigned long long>(index));
}

ASCEND_SIM_RT void set_vector_mask(uint32_t es, bool counterArg, uint64_t hi, uint64_t lo, const std::source_location& loc) {
    touch(loc);
    VecMask& m = st().mask;
    if (counterArg || m.counter) {
        if (hi != 0) fatal("PARAM-RANGE", loc, "SetVectorMask: in Counter mode maskHigh must be 0 (maskLow holds the element count)");
        m.lo = lo;
        m.hi = 0;
    } else {
        const uint32_t lanes = es >= 2 ? 256u / es : 128u;
        if (lanes <= 64 && hi != 0) {
            fatal("PARAM-RANGE", loc, "SetVectorMask: maskHigh = %#llx must be 0 for %u-byte elements (%u lanes per repeat)",
                  static_cast<unsigned long long>(hi), es, lanes);
        }
        m.hi = hi;
        m.lo = lo;
    }
    m.explicitSet = true;
}

ASCEND_SIM_RT L0Plan l0_plan(const char* api, uint32_t es, bool isSetMask, const uint64_t* mask, bool continuous, int32_t repeatTime,
                             bool repeatLimit, const std::source_location& loc) {
    touch(loc);
    L0Plan P;
    P.lanes = es >= 2 ? 256u / es : 128u;  // the 128-bit mask register bounds the lanes of 8-bit operands
    VecMask& m = st().mask;
    if (m.counter) {  // Counter mode: an element count for the whole call; the repeats follow from it
        P.counter = true;
        P.total = isSetMask ? mask[0] : m.lo;
        if (isSetMask) {
            m.lo = P.total;
            m.hi = 0;
            m.explicitSet = true;
        }
        P.repeats = static_cast<int32_t>((P.total + P.lanes - 1) / P.lanes);
        P.lastLane = P.total ? static_cast<int32_t>((P.total < P.lanes ? P.total : P.lanes) - 1) : -1;
        return P;
    }
    if (repeatLimit && (repeatTime < 0 || repeatTime > kMaxRepeat)) {
        fatal("REPEAT-RANGE", loc, "%s: repeatTime = %d is out of range [0, %d] (an uint8_t on hardware: it would wrap to %u)", api,
              repeatTime, kMaxRepeat, unsigned(uint8_t(repeatTime)));
    }
    if (repeatTime < 0) fatal("PARAM-RANGE", loc, "%s: repeatTime = %d is negative", api, repeatTime);
    P.repeats = repeatTime;
    if (!isSetMask) {
        P.lo = m.lo;
        P.hi = P.lanes > 64 ? m.hi : 0;
    } else if (continuous) {
        if (mask[0] > P.lanes) {
            fatal("PARAM-RANGE", loc, "%s: continuous mask = %llu exceeds the %u lanes of a repeat for %u-byte elements", api,
                  static_cast<unsigned long long>(mask[0]), P.lanes, es);
        }
        const uint32_t n = static_cast<uint32_t>(mask[0]);  // 0: no lane (the call changes nothing)
        P.lo = n >= 64 ? ~0ull : ((1ull << n) - 1);
        P.hi = n >= 128 ? ~0ull : n > 64 ? ((1ull << (n - 64)) - 1) : 0;
    } else {
        P.lo = P.lanes < 64 ? (mask[0] & ((1ull << P.lanes) - 1)) : mask[0];
        P.hi = P.lanes > 64 ? mask[1] : 0;  // b32 / b64: a one-element mask array (mask[1] is not read)
    }
    if (isSetMask) {
        m.lo = P.lo;
        m.hi = P.hi;
        m.explicitSet = true;
    }
    for (int32_t e = static_cast<int32_t>(P.lanes) - 1; e >= 0; --e) {
        if (P.on(0, static_cast<uint32_t>(e))) {
            P.lastLane = e;
            break;
        }
    }
    return P;
}

// Mask bit i is defined iff the compared source elements i are (one shadow bit per mask bit).
ASCEND_SIM_RT void prop_mask_defined(uint8_t* d, uint32_t count, const void* a, const void* b, uint32_t es) {
    const uint64_t maskBytes = (uint64_t(count) + 7) / 8;
    if (all_def(a, uint64_t(count) * es) && (b == nullptr || all_def(b, uint64_t(count) * es))) {
        set_def(d, maskBytes);
        return;
    }
    const uint8_t* pa = static_cast<const uint8_t*>(a);
    const uint8_t* pb = static_cast<const uint8_t*>(b);
    uint8_t* sd = shadow(d);
    for (uint32_t i = 0; i < count; i += 8) {
        uint8_t bits = 0;
        for (uint32_t j = 0; j < 8; ++j) {
            const uint32_t k = i + j;
            const bool def = k < count && elem_def(pa + uint64_t(k) * es, es) && (pb == nullptr || elem_def(pb + uint64_t(k) * es, es));
            bits |= uint8_t(def ? 1u : 0u) << j;
        }
        sd[i / 8] = bits;
    }
}

}  // namespace AscendC::sim::detail

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_VEC_RT_H
