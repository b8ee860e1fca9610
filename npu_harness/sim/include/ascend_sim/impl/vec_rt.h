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

ASCEND_SIM_RT Level0 level0_setup(const char* api, uint32_t es, const uint64_t mask[2], bool continuous, int32_t repeatTime,
                           const std::source_location& loc) {
    touch(loc);
    if (repeatTime < 0 || repeatTime > kMaxRepeat) {
        fatal("REPEAT-RANGE", loc, "%s: repeatTime = %d is out of range [0, %d] (an uint8_t on hardware: it would wrap to %u)", api,
              repeatTime, kMaxRepeat, unsigned(uint8_t(repeatTime)));
    }
    Level0 L{es, uint32_t(kRepeatBytesV / es), 32u / es, 0, 0, -1};
    const uint32_t maxMask = L.perRepeat < 128 ? L.perRepeat : 128;  // 128-bit mask register
    if (continuous) {
        if (mask[0] > maxMask) {
            fatal("PARAM-RANGE", loc, "%s: continuous mask = %llu exceeds %u elements per repeat for %u-byte elements", api,
                  static_cast<unsigned long long>(mask[0]), maxMask, es);
        }
        const uint32_t n = static_cast<uint32_t>(mask[0]);
        L.lo = n >= 64 ? ~0ull : ((1ull << n) - 1);
        L.hi = n >= 128 ? ~0ull : n > 64 ? ((1ull << (n - 64)) - 1) : 0;
    } else {
        L.lo = mask[0];
        L.hi = es == 2 || es == 1 ? mask[1] : 0;  // 32-bit types use mask[0] only
    }
    for (int32_t e = static_cast<int32_t>(maxMask) - 1; e >= 0; --e) {
        if (L.active(static_cast<uint32_t>(e))) {
            L.lastActive = e;
            break;
        }
    }
    return L;
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
