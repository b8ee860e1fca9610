// ascend_sim/vec.h - element-wise vector instructions, count forms (ref §4.2).
//
// Numerics: every element is computed in float (int64 for integer types) and rounded to the
// destination type once (half/bfloat16_t: round to nearest even). Checks happen once per call:
// operands live, 32-B aligned in UB, `count` elements fit (ref §4.2: count need not be a multiple of
// 32 B for compute; it must fit in the tensors).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_VEC_H
#define ASCEND_SIM_ASCEND_SIM_VEC_H

#include <limits>

#include "level0.h"
#include "tensor.h"

namespace AscendC {

namespace sim::detail {

template <class T, class... Ts> inline constexpr bool is_any_of_v = (std::is_same_v<T, Ts> || ...);

template <class T> inline constexpr bool is_fp16_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>;
template <class T> inline constexpr bool is_float_like_v = is_fp16_v<T> || std::is_floating_point_v<T>;

// Computation type: float for half/bfloat16_t/float, double for double, int64 for integers.
template <class T>
using calc_t = std::conditional_t<is_fp16_v<T>, float, std::conditional_t<std::is_integral_v<T>, int64_t, T>>;

inline constexpr uint64_t kRepeatBytesV = 256;  // one repeat = 8 x 32 B (ref §4.5)

template <class T> inline calc_t<T> up(T v) { return static_cast<calc_t<T>>(v); }
template <class T, class C> inline T down(C v) {
    if constexpr (is_fp16_v<T>) {
        return T(static_cast<float>(v));
    } else {
        return static_cast<T>(v);
    }
}

// Checked operand lists.
template <class T> struct Op {
    const char* name;
    const LocalTensor<T>& t;
};

inline void check_vec_begin(const char* api, int64_t count, const std::source_location& loc) {
    touch(loc);
    check_count(api, count, loc);
    // a count-form API programs the mask register itself (Counter mode) and leaves it reset: Normal
    // mode, every lane (modelling assumption, docs/emulator.md)
    VecMask& m = st().mask;
    m.counter = false;
    m.hi = m.lo = ~0ull;
    m.explicitSet = false;
}

template <class T, class F>
inline void unary_loop(T* d, const T* s0, int32_t n, F f) {
    for (int32_t i = 0; i < n; ++i) d[i] = down<T>(f(up(s0[i])));
}

template <class T, class F>
inline void binary_loop(T* d, const T* a, const T* b, int32_t n, F f) {
    for (int32_t i = 0; i < n; ++i) d[i] = down<T>(f(up(a[i]), up(b[i])));
}

// Math helpers that never call a libm function whose name a kernel might take (sqrt, floor, round,
// ...; kernels are extern "C"): square roots are compiled without errno handling (a plain
// instruction), rounding to integers is done exactly by hand. Only expf / logf are libm calls.
#if defined(__x86_64__) || defined(__i386__)
inline float sqrt_f(float x) {
    float r;
    __asm__("sqrtss %1, %0" : "=x"(r) : "x"(x));
    return r;
}
inline double sqrt_d(double x) {
    double r;
    __asm__("sqrtsd %1, %0" : "=x"(r) : "x"(x));
    return r;
}
#elif defined(__aarch64__)
inline float sqrt_f(float x) {
    float r;
    __asm__("fsqrt %s0, %s1" : "=w"(r) : "w"(x));
    return r;
}
inline double sqrt_d(double x) {
    double r;
    __asm__("fsqrt %d0, %d1" : "=w"(r) : "w"(x));
    return r;
}
#else
inline float sqrt_f(float x) { return __builtin_sqrtf(x); }
inline double sqrt_d(double x) { return __builtin_sqrt(x); }
#endif

inline constexpr double kTwo52 = 4503599627370496.0;  // 2^52: doubles at least this large are integers

inline double trunc_d(double v) {
    if (!(v > -kTwo52 && v < kTwo52)) return v;  // already integral, inf or NaN
    return static_cast<double>(static_cast<int64_t>(v));
}
inline double floor_d(double v) {
    const double t = trunc_d(v);
    return t > v ? t - 1.0 : t;
}
inline double ceil_d(double v) {
    const double t = trunc_d(v);
    return t < v ? t + 1.0 : t;
}
// nearest, ties away from zero
inline double round_away_d(double v) {
    const double t = trunc_d(v), f = v - t;  // exact
    if (f >= 0.5) return t + 1.0;
    if (f <= -0.5) return t - 1.0;
    return t;
}
// nearest, ties to even
inline double round_even_d(double v) {
    const double t = trunc_d(v), f = v - t;  // exact
    const double step = f > 0 ? 1.0 : -1.0;
    const double af = f < 0 ? -f : f;
    if (af > 0.5) return t + step;
    if (af == 0.5) return (static_cast<int64_t>(t) & 1) ? t + step : t;
    return t;
}

template <class C> inline bool isnan_c(C v) {
    if constexpr (std::is_floating_point_v<C>) {
        return v != v;
    } else {
        return false;
    }
}

// max / min that propagate NaN (either operand NaN -> a + b, a NaN). Every candidate is computed
// unconditionally and then picked, so the element loops have no branches and vectorise (a branch
// on the sign of real data mispredicts half the time).
template <class C> inline C max_nan(C a, C b) {
    const C m = a > b ? a : b;
    if constexpr (std::is_floating_point_v<C>) {
        const C sum = a + b;
        return (isnan_c(a) | isnan_c(b)) ? sum : m;
    } else {
        return m;
    }
}
template <class C> inline C min_nan(C a, C b) {
    const C m = a < b ? a : b;
    if constexpr (std::is_floating_point_v<C>) {
        const C sum = a + b;
        return (isnan_c(a) | isnan_c(b)) ? sum : m;
    } else {
        return m;
    }
}
template <class C> inline C relu_nan(C a) {
    const C r = a > C(0) ? a : C(0);
    return isnan_c(a) ? a : r;
}
template <class C> inline C leaky_relu(C a, C s) {
    const C m = a * s;
    return a >= C(0) ? a : m;
}

// ---- counters and definedness propagation (UB shadow, see tensor.h) ----------------------------------
inline void count_vec(VecOp op, uint32_t esize, uint64_t count) {
    Counters& c = cnt();
    const uint32_t k = size_class(esize);
    c.vecInstr[static_cast<uint32_t>(op)][k] += 1;
    c.vecRepeats[static_cast<uint32_t>(op)][k] += (count * esize + kRepeatBytesV - 1) / kRepeatBytesV;
}

// ASCEND_SIM_FP16_OVERFLOW=1 (off by default): a half result that is +-inf while its sources are finite
// overflowed (FP16-OVERFLOW); reported once per call site.
ASCEND_SIM_RT void report_f16_overflow(const char* api, uint64_t index, const std::source_location& loc);
template <class T>
inline void check_f16_overflow(const char* api, const T* d, const T* a, const T* b, uint64_t n, const std::source_location& loc) {
    if constexpr (std::is_same_v<T, half>) {
        if (!g_fp16Overflow) return;
        auto inf = [](const half& h) { return (h.sim_bits & 0x7fffu) == 0x7c00u; };
        auto fin = [](const half& h) { return (h.sim_bits & 0x7c00u) != 0x7c00u; };
        for (uint64_t i = 0; i < n; ++i) {
            if (inf(d[i]) && fin(a[i]) && (b == nullptr || fin(b[i]))) {
                report_f16_overflow(api, i, loc);
                return;
            }
        }
    }
}

// dst element i is defined iff element i of every source is (element sizes may differ: Cast).
ASCEND_SIM_RT void prop_defined(const void* d, uint32_t dEs, const void* a, uint32_t aEs, const void* b, uint32_t bEs, uint64_t n);

template <class T> inline void check_unary(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t count,
                                           const std::source_location& loc) {
    check_vec_begin(api, count, loc);
    check_operand(api, "dst", dst.sim_view(), uint64_t(count), loc);
    check_operand(api, "src", src.sim_view(), uint64_t(count), loc);
}

template <class T> inline void check_binary(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                                            int32_t count, const std::source_location& loc) {
    check_vec_begin(api, count, loc);
    check_operand(api, "dst", dst.sim_view(), uint64_t(count), loc);
    check_operand(api, "src0", src0.sim_view(), uint64_t(count), loc);
    check_operand(api, "src1", src1.sim_view(), uint64_t(count), loc);
}

}  // namespace sim::detail

// ---- level-0 (mask + repeat) forms (ref §4, §4.5) ------------------------------------------------------
// Strides are in 32-B blocks. repeatTime is taken as int32_t (uint8_t on hardware) so that a value
// outside [0, 255], which would silently wrap on hardware, is reported as REPEAT-RANGE.
struct BinaryRepeatParams {
    BinaryRepeatParams() {}
    BinaryRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t src0BlkStrideIn, const uint8_t src1BlkStrideIn,
                       const uint8_t dstRepStrideIn, const uint8_t src0RepStrideIn, const uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn), src1BlkStride(src1BlkStrideIn), dstRepStride(dstRepStrideIn),
          src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn) {}
    uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1;
    uint8_t dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
};

struct UnaryRepeatParams {
    UnaryRepeatParams() {}
    UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn, const uint8_t dstRepStrideIn, const uint8_t srcRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn), srcRepStride(srcRepStrideIn) {}
    uint16_t dstBlkStride = 1, srcBlkStride = 1;
    uint8_t dstRepStride = 8, srcRepStride = 8;
};

namespace sim::detail {

// Level-0 binary op: lanes of dst / src0 / src1 addressed with the BinaryRepeatParams strides.
template <class T, class F>
inline void level0_binary(const char* api, VecOp op, const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                          bool isSetMask, const uint64_t mask[], bool continuous, int32_t repeatTime, const BinaryRepeatParams& p,
                          const std::source_location& loc, F f) {
    const L0Plan P = l0_plan(api, sizeof(T), isSetMask, mask, continuous, repeatTime, true, loc);
    if (P.empty()) return;
    const L0Opnd d{reinterpret_cast<uint8_t*>(dst.sim_ptr), sizeof(T), p.dstBlkStride, p.dstRepStride};
    const L0Opnd a{reinterpret_cast<uint8_t*>(src0.sim_ptr), sizeof(T), p.src0BlkStride, p.src0RepStride};
    const L0Opnd b{reinterpret_cast<uint8_t*>(src1.sim_ptr), sizeof(T), p.src1BlkStride, p.src1RepStride};
    const uint64_t ed = l0_check(api, "dst", dst, P, d, kUbAlign, loc);
    const uint64_t ea = l0_check(api, "src0", src0, P, a, kUbAlign, loc);
    const uint64_t eb = l0_check(api, "src1", src1, P, b, kUbAlign, loc);
    l0_count(op, sizeof(T), P.repeats);
    race_v(api, loc, d.p, ed, a.p, ea, b.p, eb);
    l0_elementwise<T, T>(P, d, a, &b, [f](const T& x, const T& y) { return down<T>(f(up(x), up(y))); });
}

// Level-0 unary op (UnaryRepeatParams strides); D and S may differ in width (Cast: lanes follow the wider).
template <class D, class S, class F>
inline void level0_unary(const char* api, VecOp op, const LocalTensor<D>& dst, const LocalTensor<S>& src, bool isSetMask,
                         const uint64_t mask[], bool continuous, int32_t repeatTime, const UnaryRepeatParams& p,
                         const std::source_location& loc, F f) {
    constexpr uint32_t es = sizeof(D) > sizeof(S) ? sizeof(D) : sizeof(S);
    const L0Plan P = l0_plan(api, es, isSetMask, mask, continuous, repeatTime, true, loc);
    if (P.empty()) return;
    const L0Opnd d{reinterpret_cast<uint8_t*>(dst.sim_ptr), sizeof(D), p.dstBlkStride, p.dstRepStride};
    const L0Opnd a{reinterpret_cast<uint8_t*>(src.sim_ptr), sizeof(S), p.srcBlkStride, p.srcRepStride};
    const uint64_t ed = l0_check(api, "dst", dst, P, d, kUbAlign, loc);
    const uint64_t ea = l0_check(api, "src", src, P, a, kUbAlign, loc);
    l0_count(op, es, P.repeats);
    race_v(api, loc, d.p, ed, a.p, ea);
    l0_elementwise<D, S>(P, d, a, nullptr, f);
}

}  // namespace sim::detail

// dtype lists per op (A2, ref §4.2 / §8 rule 8): binary arithmetic int16/half/int32/float; Div and
// the transcendental ops half/float.
#define ASCEND_SIM_ARITH_TYPES(T) ::AscendC::sim::detail::is_any_of_v<T, half, float, int16_t, int32_t>
#define ASCEND_SIM_FP_TYPES(T) ::AscendC::sim::detail::is_any_of_v<T, half, float>

#define ASCEND_SIM_BINARY(NAME, TYPES, EXPR)                                                                                      \
    template <typename T, bool isSetMask = true>                                                                                 \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const int32_t& count,    \
                     std::source_location loc = std::source_location::current()) {                                              \
        static_assert(TYPES(T), "AscendC::" #NAME ": unsupported dtype for this instruction (see docs/emulator.md)");            \
        sim::detail::check_binary(#NAME, dst, src0, src1, count, loc);                                                           \
        sim::detail::count_vec(sim::detail::VecOp::NAME, sizeof(T), uint64_t(count));                                            \
        sim::detail::prop_defined(dst.sim_ptr, sizeof(T), src0.sim_ptr, sizeof(T), src1.sim_ptr, sizeof(T), uint64_t(count));    \
        sim::detail::race_v(#NAME, loc, dst.sim_ptr, uint64_t(count) * sizeof(T), src0.sim_ptr, uint64_t(count) * sizeof(T),     \
                            src1.sim_ptr, uint64_t(count) * sizeof(T));                                                          \
        sim::detail::binary_loop(dst.sim_ptr, src0.sim_ptr, src1.sim_ptr, count, [](auto a, auto b) { return EXPR; });           \
        sim::detail::check_f16_overflow(#NAME, dst.sim_ptr, src0.sim_ptr, src1.sim_ptr, uint64_t(count), loc);                  \
    }                                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                                 \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask,           \
                     const int32_t repeatTime, const BinaryRepeatParams& repeatParams,                                           \
                     std::source_location loc = std::source_location::current()) {                                              \
        static_assert(TYPES(T), "AscendC::" #NAME ": unsupported dtype for this instruction (see docs/emulator.md)");            \
        const uint64_t m[2] = {mask, 0};                                                                                         \
        sim::detail::level0_binary<T>(#NAME, sim::detail::VecOp::NAME, dst, src0, src1, isSetMask, m, true, repeatTime,          \
                                      repeatParams, loc, [](auto a, auto b) { return EXPR; });                                   \
    }                                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                                 \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const uint64_t mask[],   \
                     const int32_t repeatTime, const BinaryRepeatParams& repeatParams,                                           \
                     std::source_location loc = std::source_location::current()) {                                              \
        static_assert(TYPES(T), "AscendC::" #NAME ": unsupported dtype for this instruction (see docs/emulator.md)");            \
        sim::detail::level0_binary<T>(#NAME, sim::detail::VecOp::NAME, dst, src0, src1, isSetMask, mask, false, repeatTime,      \
                                      repeatParams, loc, [](auto a, auto b) { return EXPR; });                                   \
    }

ASCEND_SIM_BINARY(Add, ASCEND_SIM_ARITH_TYPES, a + b)
ASCEND_SIM_BINARY(Sub, ASCEND_SIM_ARITH_TYPES, a - b)
ASCEND_SIM_BINARY(Mul, ASCEND_SIM_ARITH_TYPES, a* b)
ASCEND_SIM_BINARY(Div, ASCEND_SIM_FP_TYPES, a / b)
ASCEND_SIM_BINARY(Max, ASCEND_SIM_ARITH_TYPES, sim::detail::max_nan(a, b))
ASCEND_SIM_BINARY(Min, ASCEND_SIM_ARITH_TYPES, sim::detail::min_nan(a, b))

#undef ASCEND_SIM_BINARY

// Tensor-scalar ops: the scalar is taken as `const T&` with T deduced from the tensors only, so
// `Muls(dst, src, 0.5f, n)` works for half and float tensors (any scalar converting to T).
#define ASCEND_SIM_SCALAR(NAME, TYPES, EXPR)                                                                                      \
    template <typename T, bool isSetMask = true>                                                                                 \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::type_identity_t<T>& scalarValue,           \
                     const int32_t& count, std::source_location loc = std::source_location::current()) {                         \
        static_assert(TYPES(T), "AscendC::" #NAME ": unsupported dtype for this instruction (see docs/emulator.md)");            \
        sim::detail::check_unary(#NAME, dst, src, count, loc);                                                                   \
        sim::detail::count_vec(sim::detail::VecOp::NAME, sizeof(T), uint64_t(count));                                            \
        sim::detail::prop_defined(dst.sim_ptr, sizeof(T), src.sim_ptr, sizeof(T), nullptr, 0, uint64_t(count));                  \
        sim::detail::race_v(#NAME, loc, dst.sim_ptr, uint64_t(count) * sizeof(T), src.sim_ptr, uint64_t(count) * sizeof(T));      \
        const auto s = sim::detail::up(static_cast<T>(scalarValue));                                                             \
        sim::detail::unary_loop(dst.sim_ptr, src.sim_ptr, count, [s](auto a) { return EXPR; });                                 \
        sim::detail::check_f16_overflow<T>(#NAME, dst.sim_ptr, src.sim_ptr, nullptr, uint64_t(count), loc);                     \
    }                                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                                 \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::type_identity_t<T>& scalarValue,           \
                     uint64_t mask, const int32_t repeatTime, const UnaryRepeatParams& repeatParams,                             \
                     std::source_location loc = std::source_location::current()) {                                              \
        static_assert(TYPES(T), "AscendC::" #NAME ": unsupported dtype for this instruction (see docs/emulator.md)");            \
        const uint64_t m[2] = {mask, 0};                                                                                         \
        const auto s = sim::detail::up(static_cast<T>(scalarValue));                                                             \
        sim::detail::level0_unary<T, T>(#NAME, sim::detail::VecOp::NAME, dst, src, isSetMask, m, true, repeatTime, repeatParams,  \
                                        loc, [s](const T& x) { auto a = sim::detail::up(x); return sim::detail::down<T>(EXPR); }); \
    }                                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                                 \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::type_identity_t<T>& scalarValue,           \
                     const uint64_t mask[], const int32_t repeatTime, const UnaryRepeatParams& repeatParams,                     \
                     std::source_location loc = std::source_location::current()) {                                              \
        static_assert(TYPES(T), "AscendC::" #NAME ": unsupported dtype for this instruction (see docs/emulator.md)");            \
        const auto s = sim::detail::up(static_cast<T>(scalarValue));                                                             \
        sim::detail::level0_unary<T, T>(#NAME, sim::detail::VecOp::NAME, dst, src, isSetMask, mask, false, repeatTime,           \
                                        repeatParams, loc,                                                                       \
                                        [s](const T& x) { auto a = sim::detail::up(x); return sim::detail::down<T>(EXPR); });    \
    }

ASCEND_SIM_SCALAR(Adds, ASCEND_SIM_ARITH_TYPES, a + s)
ASCEND_SIM_SCALAR(Muls, ASCEND_SIM_ARITH_TYPES, a* s)
ASCEND_SIM_SCALAR(Maxs, ASCEND_SIM_ARITH_TYPES, sim::detail::max_nan(a, s))
ASCEND_SIM_SCALAR(Mins, ASCEND_SIM_ARITH_TYPES, sim::detail::min_nan(a, s))
ASCEND_SIM_SCALAR(LeakyRelu, ASCEND_SIM_FP_TYPES, sim::detail::leaky_relu(a, s))

#undef ASCEND_SIM_SCALAR

#define ASCEND_SIM_UNARY(NAME, TYPES, EXPR)                                                                                       \
    template <typename T, bool isSetMask = true>                                                                                 \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count,                                 \
                     std::source_location loc = std::source_location::current()) {                                              \
        static_assert(TYPES(T), "AscendC::" #NAME ": unsupported dtype for this instruction (see docs/emulator.md)");            \
        sim::detail::check_unary(#NAME, dst, src, count, loc);                                                                   \
        sim::detail::count_vec(sim::detail::VecOp::NAME, sizeof(T), uint64_t(count));                                            \
        sim::detail::prop_defined(dst.sim_ptr, sizeof(T), src.sim_ptr, sizeof(T), nullptr, 0, uint64_t(count));                  \
        sim::detail::race_v(#NAME, loc, dst.sim_ptr, uint64_t(count) * sizeof(T), src.sim_ptr, uint64_t(count) * sizeof(T));      \
        sim::detail::unary_loop(dst.sim_ptr, src.sim_ptr, count, [](auto a) { return EXPR; });                                  \
        sim::detail::check_f16_overflow<T>(#NAME, dst.sim_ptr, src.sim_ptr, nullptr, uint64_t(count), loc);                     \
    }                                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                                 \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, const int32_t repeatTime,              \
                     const UnaryRepeatParams& repeatParams, std::source_location loc = std::source_location::current()) {        \
        static_assert(TYPES(T), "AscendC::" #NAME ": unsupported dtype for this instruction (see docs/emulator.md)");            \
        const uint64_t m[2] = {mask, 0};                                                                                         \
        sim::detail::level0_unary<T, T>(#NAME, sim::detail::VecOp::NAME, dst, src, isSetMask, m, true, repeatTime, repeatParams,  \
                                        loc, [](const T& x) { auto a = sim::detail::up(x); return sim::detail::down<T>(EXPR); });  \
    }                                                                                                                            \
    template <typename T, bool isSetMask = true>                                                                                 \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const int32_t repeatTime,      \
                     const UnaryRepeatParams& repeatParams, std::source_location loc = std::source_location::current()) {        \
        static_assert(TYPES(T), "AscendC::" #NAME ": unsupported dtype for this instruction (see docs/emulator.md)");            \
        sim::detail::level0_unary<T, T>(#NAME, sim::detail::VecOp::NAME, dst, src, isSetMask, mask, false, repeatTime,           \
                                        repeatParams, loc,                                                                       \
                                        [](const T& x) { auto a = sim::detail::up(x); return sim::detail::down<T>(EXPR); });     \
    }

#define ASCEND_SIM_RELU_TYPES(T) ::AscendC::sim::detail::is_any_of_v<T, half, float, int32_t>

ASCEND_SIM_UNARY(Exp, ASCEND_SIM_FP_TYPES, __builtin_expf(a))
ASCEND_SIM_UNARY(Ln, ASCEND_SIM_FP_TYPES, __builtin_logf(a))
ASCEND_SIM_UNARY(Abs, ASCEND_SIM_FP_TYPES, __builtin_fabsf(a))
ASCEND_SIM_UNARY(Sqrt, ASCEND_SIM_FP_TYPES, sim::detail::sqrt_f(a))
ASCEND_SIM_UNARY(Rsqrt, ASCEND_SIM_FP_TYPES, static_cast<float>(1.0 / sim::detail::sqrt_d(static_cast<double>(a))))
ASCEND_SIM_UNARY(Reciprocal, ASCEND_SIM_FP_TYPES, 1.0f / a)
ASCEND_SIM_UNARY(Relu, ASCEND_SIM_RELU_TYPES, sim::detail::relu_nan(a))

#undef ASCEND_SIM_UNARY
#undef ASCEND_SIM_RELU_TYPES
#undef ASCEND_SIM_ARITH_TYPES
#undef ASCEND_SIM_FP_TYPES

// Duplicate: fill `count` elements with the scalar.
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const std::type_identity_t<T>& scalarValue, const int32_t& count,
                      std::source_location loc = std::source_location::current()) {
    static_assert(sim::detail::is_any_of_v<T, half, bfloat16_t, float, int16_t, uint16_t, int32_t, uint32_t>,
                  "AscendC::Duplicate: unsupported dtype");
    sim::detail::check_vec_begin("Duplicate", count, loc);
    sim::detail::check_operand("Duplicate", "dst", dst.sim_view(), uint64_t(count), loc);
    sim::detail::count_vec(sim::detail::VecOp::Duplicate, sizeof(T), uint64_t(count));
    sim::detail::set_def(dst.sim_ptr, uint64_t(count) * sizeof(T));
    sim::detail::race_v("Duplicate", loc, dst.sim_ptr, uint64_t(count) * sizeof(T), nullptr, 0);
    const T v = static_cast<T>(scalarValue);
    T* d = dst.sim_ptr;
    for (int32_t i = 0; i < count; ++i) d[i] = v;
}

namespace sim::detail {
template <class T>
inline void level0_dup(const LocalTensor<T>& dst, const T v, bool isSetMask, const uint64_t mask[2], bool continuous, int32_t repeatTime,
                       uint16_t dstBlockStride, uint8_t dstRepeatStride, const std::source_location& loc) {
    const L0Plan P = l0_plan("Duplicate", sizeof(T), isSetMask, mask, continuous, repeatTime, true, loc);
    if (P.empty()) return;
    const L0Opnd d{reinterpret_cast<uint8_t*>(dst.sim_ptr), sizeof(T), dstBlockStride, dstRepeatStride};
    const uint64_t ed = l0_check("Duplicate", "dst", dst, P, d, kUbAlign, loc);
    l0_count(VecOp::Duplicate, sizeof(T), P.repeats);
    race_v("Duplicate", loc, d.p, ed, nullptr, 0);
    for (int32_t r = 0; r < P.repeats; ++r) {
        const uint32_t n = P.lanes_in(r);
        for (uint32_t e = 0; e < n; ++e) {
            if (!P.on(r, e)) continue;
            T* pd = reinterpret_cast<T*>(d.p + l0_off(d, r, e));
            *pd = v;
            set_elem_def(pd, sizeof(T), true);
        }
    }
}
}  // namespace sim::detail

// Level-0 Duplicate: (dst, scalar, mask, repeatTime, dstBlockStride, dstRepeatStride) (ref §4.2).
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const std::type_identity_t<T>& scalarValue, uint64_t mask, const int32_t repeatTime,
                      const uint16_t dstBlockStride, const uint8_t dstRepeatStride,
                      std::source_location loc = std::source_location::current()) {
    const uint64_t m[2] = {mask, 0};
    sim::detail::level0_dup<T>(dst, static_cast<T>(scalarValue), isSetMask, m, true, repeatTime, dstBlockStride, dstRepeatStride, loc);
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const std::type_identity_t<T>& scalarValue, const uint64_t mask[], const int32_t repeatTime,
                      const uint16_t dstBlockStride, const uint8_t dstRepeatStride,
                      std::source_location loc = std::source_location::current()) {
    sim::detail::level0_dup<T>(dst, static_cast<T>(scalarValue), isSetMask, mask, false, repeatTime, dstBlockStride, dstRepeatStride, loc);
}

// ---- Cast --------------------------------------------------------------------------------------

namespace sim::detail {

// Traits for rounding a double (exact value of the source element) into a floating destination.
template <class T> struct FpTraits;
template <> struct FpTraits<float> {
    using Bits = uint32_t;
    static float rne(double v) { return static_cast<float>(v); }
    static double val(float x) { return x; }
    static Bits bits(float x) { return std::bit_cast<uint32_t>(x); }
    // neighbours of a finite or infinite non-NaN float
    static float next_up(float x) {
        const uint32_t b = std::bit_cast<uint32_t>(x);
        if (b == 0x7f800000u) return x;
        if ((b & 0x7fffffffu) == 0) return std::bit_cast<float>(0x00000001u);
        return std::bit_cast<float>((b & 0x80000000u) ? b - 1 : b + 1);
    }
    static float next_down(float x) { return -next_up(-x); }
};
template <class H> struct Fp16Traits {
    using Bits = uint16_t;
    static H rne(double v) { return H(v); }
    static double val(H x) { return static_cast<float>(x); }
    static Bits bits(H x) { return x.sim_bits; }
    static H from(uint16_t b) { return H::FromBits(b); }
    static H neg(H x) { return from(uint16_t(x.sim_bits ^ 0x8000u)); }
    static H next_up(H x) {
        const uint16_t b = x.sim_bits;
        if ((b & 0x7fffu) == 0) return from(0x0001u);  // +-0 -> smallest subnormal
        return (b & 0x8000u) ? from(uint16_t(b - 1)) : from(uint16_t(b + 1));
    }
    static H next_down(H x) { return neg(next_up(neg(x))); }
};
template <> struct FpTraits<half> : Fp16Traits<half> {};
template <> struct FpTraits<bfloat16_t> : Fp16Traits<bfloat16_t> {};

template <class D>
inline D round_fp(double v, RoundMode mode) {
    using Tr = FpTraits<D>;
    const D c = Tr::rne(v);
    if (mode == RoundMode::CAST_NONE || mode == RoundMode::CAST_RINT || v != v) return c;
    const double cv = Tr::val(c);
    if (cv == v) return c;
    D lo, hi;
    if (cv > v) {
        hi = c;
        lo = Tr::next_down(c);
    } else {
        lo = c;
        hi = Tr::next_up(c);
    }
    switch (mode) {
        case RoundMode::CAST_FLOOR: return lo;
        case RoundMode::CAST_CEIL: return hi;
        case RoundMode::CAST_TRUNC: return v > 0 ? lo : hi;
        case RoundMode::CAST_ROUND: {
            const double dl = v - Tr::val(lo), dh = Tr::val(hi) - v;
            if (dl < dh) return lo;
            if (dh < dl) return hi;
            return v > 0 ? hi : lo;  // tie: away from zero
        }
        case RoundMode::CAST_ODD: return (Tr::bits(lo) & 1u) ? lo : hi;
        default: return c;
    }
}

template <class D>
inline D round_int(double v, RoundMode mode) {
    if (v != v) return D(0);
    double r;
    switch (mode) {
        case RoundMode::CAST_FLOOR: r = floor_d(v); break;
        case RoundMode::CAST_CEIL: r = ceil_d(v); break;
        case RoundMode::CAST_ROUND: r = round_away_d(v); break;  // ties away from zero
        case RoundMode::CAST_TRUNC: r = trunc_d(v); break;
        default: r = round_even_d(v); break;  // NONE / RINT / ODD: to nearest even
    }
    constexpr double lo = static_cast<double>(std::numeric_limits<D>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<D>::max());
    if (r < lo) return std::numeric_limits<D>::min();  // saturate
    if (r > hi) return std::numeric_limits<D>::max();
    return static_cast<D>(r);
}

template <class D, class S>
inline D cast_one(S s, RoundMode mode) {
    const double v = static_cast<double>(static_cast<calc_t<S>>(s));
    if constexpr (std::is_same_v<D, float> && std::is_same_v<S, float>) {
        // float -> float rounds to an integral value, kept in float (Cast page, table 1)
        if (v != v || v - v != 0.0) return s;  // NaN, inf
        double r;
        switch (mode) {
            case RoundMode::CAST_FLOOR: r = floor_d(v); break;
            case RoundMode::CAST_CEIL: r = ceil_d(v); break;
            case RoundMode::CAST_ROUND: r = round_away_d(v); break;
            case RoundMode::CAST_TRUNC: r = trunc_d(v); break;
            default: r = round_even_d(v); break;
        }
        const float f = static_cast<float>(r);
        return (f == 0.0f && v < 0.0) ? -0.0f : f;  // -0.4 -> -0.0
    } else if constexpr (std::is_integral_v<D>) {
        return round_int<D>(v, mode);
    } else {
        return round_fp<D>(v, mode);
    }
}

template <class D, class S, RoundMode M>
inline void cast_loop(D* d, const S* s, uint32_t n) {
    if constexpr (std::is_same_v<D, float> && std::is_same_v<S, float>) {
        for (uint32_t i = 0; i < n; ++i) d[i] = cast_one<D>(s[i], M);  // rounds to an integral value
    } else if constexpr (std::is_same_v<D, S>) {
        std::memmove(d, s, size_t(n) * sizeof(S));  // not a documented pair on A2 / 310P (CAST-UNSUPPORTED)
    } else if constexpr (M == RoundMode::CAST_NONE || M == RoundMode::CAST_RINT) {
        // fast paths for exact widening / RNE narrowing between float-like types
        if constexpr (is_float_like_v<D> && is_float_like_v<S> && sizeof(S) <= sizeof(float)) {
            for (uint32_t i = 0; i < n; ++i) d[i] = down<D>(static_cast<float>(s[i]));
        } else {
            for (uint32_t i = 0; i < n; ++i) d[i] = cast_one<D>(s[i], M);
        }
    } else {
        for (uint32_t i = 0; i < n; ++i) d[i] = cast_one<D>(s[i], M);
    }
}

template <class T>
inline constexpr bool is_cast_type_v = is_any_of_v<T, half, float, bfloat16_t, int32_t, int16_t, int8_t, uint8_t, int64_t>;

// Documented (src, dst, RoundMode) combinations of the vector Cast, per product. Source: CANN 8.5 API
// reference, "Cast" (atlasascendc_api_07_0073, https://www.hiascend.com/document/detail/zh/
// CANNCommunityEdition/850/API/ascendcopapi/atlasascendc_api_07_0073.html): table 6 (Atlas A2, __NPU_ARCH__
// 2201) and table 5 (Atlas inference AI Core, 310P, 2002); the A2 table is also table 4 of cannmirror/
// asc-devkit docs/api/context/Cast.md. A mask has bit RoundMode m set when m is documented; 0 = the pair is not
// in the table. int4b_t rows are left out (no int4b_t type here). Other targets are not checked.
inline constexpr uint8_t kCastNone = 1u << uint8_t(RoundMode::CAST_NONE);
inline constexpr uint8_t kCastOdd = 1u << uint8_t(RoundMode::CAST_ODD);
inline constexpr uint8_t kCastRint = 1u << uint8_t(RoundMode::CAST_RINT);
inline constexpr uint8_t kCastR5 = 0x3eu;  // RINT / FLOOR / CEIL / ROUND / TRUNC
inline constexpr uint8_t kCastAny = 0x7fu;

template <class D, class S>
constexpr uint8_t cast_modes_a2() {
    using std::is_same_v;
    if constexpr (is_same_v<S, half>) {
        if constexpr (is_any_of_v<D, int32_t, int16_t>) return kCastR5;
        else if constexpr (is_same_v<D, float>) return kCastNone;
        else if constexpr (is_any_of_v<D, int8_t, uint8_t>) return kCastR5 | kCastNone;
        else return 0;
    } else if constexpr (is_same_v<S, float>) {
        if constexpr (is_any_of_v<D, float, int32_t, int64_t, int16_t, bfloat16_t>) return kCastR5;
        else if constexpr (is_same_v<D, half>) return kCastAny;  // RINT..TRUNC, ODD, NONE
        else return 0;
    } else if constexpr (is_same_v<S, bfloat16_t>) {
        if constexpr (is_same_v<D, float>) return kCastNone;
        else if constexpr (is_same_v<D, int32_t>) return kCastR5;
        else return 0;
    } else if constexpr (is_any_of_v<S, uint8_t, int8_t>) {
        return is_same_v<D, half> ? kCastNone : 0;
    } else if constexpr (is_same_v<S, int16_t>) {
        if constexpr (is_same_v<D, half>) return kCastR5 | kCastNone;
        else if constexpr (is_same_v<D, float>) return kCastNone;
        else return 0;
    } else if constexpr (is_same_v<S, int32_t>) {
        if constexpr (is_same_v<D, float>) return kCastR5 | kCastNone;
        else if constexpr (is_any_of_v<D, int16_t, int64_t>) return kCastNone;
        else if constexpr (is_same_v<D, half>) return kCastAny;  // "roundMode has no effect" (with SetDeqScale)
        else return 0;
    } else if constexpr (is_same_v<S, int64_t>) {
        if constexpr (is_same_v<D, int32_t>) return kCastNone;
        else if constexpr (is_same_v<D, float>) return kCastR5;
        else return 0;
    } else {
        return 0;
    }
}

template <class D, class S>
constexpr uint8_t cast_modes_310p() {
    using std::is_same_v;
    constexpr uint8_t kNoRint = kCastR5 & ~kCastRint;
    if constexpr (is_same_v<S, half>) {
        if constexpr (is_same_v<D, int32_t>) return kCastR5;
        else if constexpr (is_same_v<D, int16_t>) return kCastRint;
        else if constexpr (is_same_v<D, float>) return kCastNone;
        else if constexpr (is_any_of_v<D, int8_t, uint8_t>) return kNoRint | kCastNone;  // FLOOR..TRUNC, NONE
        else return 0;
    } else if constexpr (is_same_v<S, float>) {
        if constexpr (is_same_v<D, int32_t>) return kCastR5;
        else if constexpr (is_same_v<D, half>) return kCastNone | kCastOdd;
        else return 0;
    } else if constexpr (is_any_of_v<S, uint8_t, int8_t, int16_t>) {
        return is_same_v<D, half> ? kCastNone : 0;
    } else if constexpr (is_same_v<S, int32_t>) {
        if constexpr (is_any_of_v<D, float, int16_t>) return kCastNone;
        else if constexpr (is_same_v<D, half>) return kCastAny;  // "roundMode has no effect" (with SetDeqScale)
        else return 0;
    } else {
        return 0;
    }
}

inline const char* round_mode_name(RoundMode m) {
    static const char* const names[] = {"CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};
    return uint8_t(m) < 7 ? names[uint8_t(m)] : "?";
}

template <class T>
constexpr const char* cast_type_name() {
    if constexpr (std::is_same_v<T, half>) return "half";
    else if constexpr (std::is_same_v<T, bfloat16_t>) return "bfloat16_t";
    else if constexpr (std::is_same_v<T, float>) return "float";
    else if constexpr (std::is_same_v<T, int64_t>) return "int64_t";
    else if constexpr (std::is_same_v<T, int32_t>) return "int32_t";
    else if constexpr (std::is_same_v<T, int16_t>) return "int16_t";
    else if constexpr (std::is_same_v<T, int8_t>) return "int8_t";
    else return "uint8_t";
}

// error[CAST-UNSUPPORTED] when (src U, dst T, roundMode) is not in the target's documented table.
template <class T, class U>
inline void check_cast_documented(RoundMode mode, const std::source_location& loc) {
    uint8_t allowed;
    const char* product;
    if constexpr (__NPU_ARCH__ == 2201) {
        allowed = cast_modes_a2<T, U>();
        product = "Atlas A2";
    } else if constexpr (__NPU_ARCH__ == 2002) {
        allowed = cast_modes_310p<T, U>();
        product = "Atlas inference (310P) AI Core";
    } else {
        return;
    }
    if (uint8_t(mode) > uint8_t(RoundMode::CAST_ODD)) return;  // PARAM-RANGE, reported by the caller
    if (allowed == 0) {
        fatal("CAST-UNSUPPORTED", loc, "Cast %s -> %s is not a documented conversion on %s (CANN Cast page, per-product table)",
              cast_type_name<U>(), cast_type_name<T>(), product);
    }
    if (!((allowed >> uint8_t(mode)) & 1u)) {
        char list[96] = "";
        for (uint8_t m = 0; m < 7; ++m) {
            if ((allowed >> m) & 1u) {
                if (list[0]) std::strncat(list, "/", sizeof(list) - std::strlen(list) - 1);
                std::strncat(list, round_mode_name(RoundMode(m)), sizeof(list) - std::strlen(list) - 1);
            }
        }
        fatal("CAST-UNSUPPORTED", loc, "Cast %s -> %s with RoundMode::%s is not documented on %s (documented: %s)",
              cast_type_name<U>(), cast_type_name<T>(), round_mode_name(mode), product, list);
    }
}

// The counter class of a Cast: float -> half is counted apart (CastF32ToF16), as the cost model charges it 1 cycle per
// repeat against 2 for f16 -> f32 (ascendc.md §5.5 CONV); every other pair stays Cast (by the wider type).
template <typename T, typename U>
constexpr VecOp cast_op() {
    return std::is_same_v<T, half> && std::is_same_v<U, float> ? VecOp::CastF32ToF16 : VecOp::Cast;
}

}  // namespace sim::detail

// dst<T> <- src<U>, each element rounded with roundMode (CAST_NONE = CAST_RINT when inexact); to
// integer types the result saturates (ref §4.2).
template <typename T, typename U>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint32_t count,
                 std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_cast_type_v<T> && is_cast_type_v<U>, "AscendC::Cast: unsupported dtype");
    touch(loc);
    check_cast_documented<T, U>(roundMode, loc);
    check_operand("Cast", "dst", dst.sim_view(), count, loc);
    check_operand("Cast", "src", src.sim_view(), count, loc);
    count_vec(cast_op<T, U>(), sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U), count);
    prop_defined(dst.sim_ptr, sizeof(T), src.sim_ptr, sizeof(U), nullptr, 0, count);
    race_v("Cast", loc, dst.sim_ptr, uint64_t(count) * sizeof(T), src.sim_ptr, uint64_t(count) * sizeof(U));
    T* d = dst.sim_ptr;
    const U* s = src.sim_ptr;
    switch (roundMode) {
        case RoundMode::CAST_NONE: cast_loop<T, U, RoundMode::CAST_NONE>(d, s, count); break;
        case RoundMode::CAST_RINT: cast_loop<T, U, RoundMode::CAST_RINT>(d, s, count); break;
        case RoundMode::CAST_FLOOR: cast_loop<T, U, RoundMode::CAST_FLOOR>(d, s, count); break;
        case RoundMode::CAST_CEIL: cast_loop<T, U, RoundMode::CAST_CEIL>(d, s, count); break;
        case RoundMode::CAST_ROUND: cast_loop<T, U, RoundMode::CAST_ROUND>(d, s, count); break;
        case RoundMode::CAST_TRUNC: cast_loop<T, U, RoundMode::CAST_TRUNC>(d, s, count); break;
        case RoundMode::CAST_ODD: cast_loop<T, U, RoundMode::CAST_ODD>(d, s, count); break;
        default: fatal("PARAM-RANGE", loc, "Cast: invalid RoundMode %d", int(roundMode));
    }
    if constexpr (std::is_same_v<T, half> && is_float_like_v<U>) {
        if (g_fp16Overflow) {
            for (uint32_t i = 0; i < count; ++i) {
                const float v = static_cast<float>(s[i]);
                if ((d[i].sim_bits & 0x7fffu) == 0x7c00u && v - v == 0.0f) {
                    report_f16_overflow("Cast", i, loc);
                    break;
                }
            }
        }
    }
}

// Level-0 Cast (ref_next §4.3: lanes per repeat follow the wider type).
template <typename T, typename U, bool isSetMask = true>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint64_t mask,
                 const int32_t repeatTime, const UnaryRepeatParams& repeatParams, std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_cast_type_v<T> && is_cast_type_v<U>, "AscendC::Cast: unsupported dtype");
    check_cast_documented<T, U>(roundMode, loc);
    const uint64_t m[2] = {mask, 0};
    level0_unary<T, U>("Cast", cast_op<T, U>(), dst, src, isSetMask, m, true, repeatTime, repeatParams, loc,
                       [roundMode](const U& x) { return cast_one<T>(x, roundMode); });
}
template <typename T, typename U, bool isSetMask = true>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint64_t mask[],
                 const int32_t repeatTime, const UnaryRepeatParams& repeatParams, std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_cast_type_v<T> && is_cast_type_v<U>, "AscendC::Cast: unsupported dtype");
    check_cast_documented<T, U>(roundMode, loc);
    level0_unary<T, U>("Cast", cast_op<T, U>(), dst, src, isSetMask, mask, false, repeatTime, repeatParams, loc,
                       [roundMode](const U& x) { return cast_one<T>(x, roundMode); });
}

// ---- Compare / Compares / Select ------------------------------------------------------------------

namespace sim::detail {

inline constexpr uint32_t kRepeatBytes = 256;  // one repeat = 8 x 32 B (ref §4.5)

template <class C>
inline bool cmp(C a, C b, CMPMODE m) {
    switch (m) {
        case CMPMODE::LT: return a < b;
        case CMPMODE::GT: return a > b;
        case CMPMODE::EQ: return a == b;
        case CMPMODE::LE: return a <= b;
        case CMPMODE::GE: return a >= b;
        case CMPMODE::NE: return a != b;
    }
    return false;
}

inline void check_cmp_count(const char* api, uint32_t count, uint32_t esize, const std::source_location& loc) {
    if ((uint64_t(count) * esize) % kRepeatBytes != 0) {
        fatal("VEC-COUNT-ALIGN", loc, "%s: count * sizeof(T) = %u x %u B = %llu B is not a multiple of 256 B (one repeat)", api, count, esize,
              static_cast<unsigned long long>(uint64_t(count) * esize));
    }
}

// Mask bit i is defined iff the compared source elements i are (one shadow bit per mask bit).
ASCEND_SIM_RT void prop_mask_defined(uint8_t* d, uint32_t count, const void* a, const void* b, uint32_t es);

// Mask byte k holds bits 8k..8k+7 (LSB first); bits at and past `count` are 0. Whole bytes in a tight
// loop (the compare mode is resolved once per call, by cmp_mask), then the tail.
template <class Get>
inline void write_mask(uint8_t* d, uint32_t count, Get bit) {
    const uint32_t full = count / 8;
    for (uint32_t k = 0; k < full; ++k) {
        const uint32_t i = k * 8;
        d[k] = uint8_t(uint32_t(bit(i)) | uint32_t(bit(i + 1)) << 1 | uint32_t(bit(i + 2)) << 2 | uint32_t(bit(i + 3)) << 3 |
                       uint32_t(bit(i + 4)) << 4 | uint32_t(bit(i + 5)) << 5 | uint32_t(bit(i + 6)) << 6 | uint32_t(bit(i + 7)) << 7);
    }
    if (count % 8) {
        uint8_t byte = 0;
        for (uint32_t j = 0; full * 8 + j < count; ++j) byte |= uint8_t(bit(full * 8 + j) ? 1u : 0u) << j;
        d[full] = byte;
    }
}

// write_mask of a(i) <m> b(i), with the switch on the mode outside the element loop.
template <class A, class B>
inline void cmp_mask(uint8_t* d, uint32_t count, CMPMODE m, A a, B b) {
    switch (m) {
        case CMPMODE::LT: write_mask(d, count, [&](uint32_t i) { return a(i) < b(i); }); break;
        case CMPMODE::GT: write_mask(d, count, [&](uint32_t i) { return a(i) > b(i); }); break;
        case CMPMODE::EQ: write_mask(d, count, [&](uint32_t i) { return a(i) == b(i); }); break;
        case CMPMODE::LE: write_mask(d, count, [&](uint32_t i) { return a(i) <= b(i); }); break;
        case CMPMODE::GE: write_mask(d, count, [&](uint32_t i) { return a(i) >= b(i); }); break;
        case CMPMODE::NE: write_mask(d, count, [&](uint32_t i) { return a(i) != b(i); }); break;
        default: write_mask(d, count, [](uint32_t) { return false; }); break;
    }
}

}  // namespace sim::detail

// dst: bitmask, bit i of byte i/8 (LSB first) = src0[i] <cmpMode> src1[i].
template <typename T, typename U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode, uint32_t count,
                    std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_any_of_v<T, half, float, int32_t>, "AscendC::Compare: unsupported dtype");
    touch(loc);
    check_cmp_count("Compare", count, sizeof(T), loc);
    check_operand("Compare", "src0", src0.sim_view(), count, loc);
    check_operand("Compare", "src1", src1.sim_view(), count, loc);
    const uint64_t maskBytes = (uint64_t(count) + 7) / 8;
    check_operand("Compare", "dst", dst.sim_view(), (maskBytes + sizeof(U) - 1) / sizeof(U), loc);
    const T* a = src0.sim_ptr;
    const T* b = src1.sim_ptr;
    count_vec(VecOp::Compare, sizeof(T), count);
    prop_mask_defined(reinterpret_cast<uint8_t*>(dst.sim_ptr), count, a, b, sizeof(T));
    race_v("Compare", loc, dst.sim_ptr, maskBytes, a, uint64_t(count) * sizeof(T), b, uint64_t(count) * sizeof(T));
    cmp_mask(reinterpret_cast<uint8_t*>(dst.sim_ptr), count, cmpMode, [a](uint32_t i) { return up(a[i]); },
             [b](uint32_t i) { return up(b[i]); });
}

template <typename T, typename U>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const std::type_identity_t<T> src1Scalar, CMPMODE cmpMode,
                     uint32_t count, std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_any_of_v<T, half, float, int32_t>, "AscendC::Compares: unsupported dtype");
    touch(loc);
    check_cmp_count("Compares", count, sizeof(T), loc);
    check_operand("Compares", "src0", src0.sim_view(), count, loc);
    const uint64_t maskBytes = (uint64_t(count) + 7) / 8;
    check_operand("Compares", "dst", dst.sim_view(), (maskBytes + sizeof(U) - 1) / sizeof(U), loc);
    const T* a = src0.sim_ptr;
    count_vec(VecOp::Compares, sizeof(T), count);
    prop_mask_defined(reinterpret_cast<uint8_t*>(dst.sim_ptr), count, a, nullptr, sizeof(T));
    race_v("Compares", loc, dst.sim_ptr, maskBytes, a, uint64_t(count) * sizeof(T));
    const auto s = up(static_cast<T>(src1Scalar));
    cmp_mask(reinterpret_cast<uint8_t*>(dst.sim_ptr), count, cmpMode, [a](uint32_t i) { return up(a[i]); },
             [s](uint32_t) { return s; });
}

namespace sim::detail {

template <class T, class U>
inline const uint8_t* check_select(const char* api, const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                                   SELMODE mode, uint32_t count, const std::source_location& loc) {
    touch(loc);
    check_operand(api, "dst", dst.sim_view(), count, loc);
    check_operand(api, "src0", src0.sim_view(), count, loc);
    // VSEL_CMPMASK_SPR: the mask register holds one repeat's worth of bits (128 for b16, 64 for
    // b32), reused for every repeat; the other modes read count bits from UB.
    const uint32_t perRepeat = kRepeatBytes / sizeof(T);
    const uint64_t bits = mode == SELMODE::VSEL_CMPMASK_SPR ? (count < perRepeat ? count : perRepeat) : count;
    const uint64_t maskBytes = (bits + 7) / 8;
    check_operand(api, "selMask", selMask.sim_view(), (maskBytes + sizeof(U) - 1) / sizeof(U), loc);
    return reinterpret_cast<const uint8_t*>(selMask.sim_ptr);
}

inline bool mask_bit(const uint8_t* m, uint32_t i) { return (m[i >> 3] >> (i & 7)) & 1u; }

// d[i] = bit (i & wrap) of m ? a[i] : b(i), as a branch-free bit blend (the mask bits of real data are
// unpredictable); every result is a bit-exact copy of the selected source element.
template <class T, class B>
inline void select_loop(T* d, const uint8_t* m, const T* a, B b, uint32_t count, uint32_t wrap) {
    using U = std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
    static_assert(sizeof(U) == sizeof(T) && std::is_trivially_copyable_v<T>);
    for (uint32_t i = 0; i < count; ++i) {
        const uint32_t k = i & wrap;
        const U sel = U(U(0) - U((m[k >> 3] >> (k & 7)) & 1u));
        const T bv = b(i);
        U ua, ub;
        std::memcpy(&ua, a + i, sizeof(U));
        std::memcpy(&ub, &bv, sizeof(U));
        const U r = U((ua & sel) | (ub & U(~sel)));
        std::memcpy(d + i, &r, sizeof(U));
    }
}

// dst element i is defined iff mask bit i (i % period) is defined and the selected source element is
// (b == nullptr: scalar src1, always defined).
template <class T>
inline void prop_select_defined(T* d, const uint8_t* m, const T* a, const T* b, uint32_t count, uint32_t period) {
    const uint32_t bits = count < period ? count : period;
    if (all_def(m, bits / 8) && (bits % 8 == 0 || (shadow(m)[bits / 8] | uint8_t(0xFFu << (bits % 8))) == 0xFF) &&
        all_def(a, uint64_t(count) * sizeof(T)) && (b == nullptr || all_def(b, uint64_t(count) * sizeof(T)))) {
        set_def(d, uint64_t(count) * sizeof(T));
        return;
    }
    const uint8_t* sm = shadow(m);
    for (uint32_t i = 0; i < count; ++i) {
        const uint32_t k = period >= count ? i : i & (period - 1);  // period: a power of two
        const bool mdef = (sm[k >> 3] >> (k & 7)) & 1u;
        const bool pick0 = mask_bit(m, k);
        const bool sdef = pick0 ? elem_def(a + i, sizeof(T)) : (b == nullptr || elem_def(b + i, sizeof(T)));
        set_elem_def(d + i, sizeof(T), mdef && sdef);
    }
}

}  // namespace sim::detail

// dst[i] = bit i of selMask ? src0[i] : src1[i]  (bit = 1 selects src0).
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                   SELMODE selMode, uint32_t count, std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_any_of_v<T, half, float>, "AscendC::Select: unsupported dtype");
    if (selMode == SELMODE::VSEL_TENSOR_SCALAR_MODE) {
        touch(loc);
        fatal("PARAM-RANGE", loc, "Select: SELMODE::VSEL_TENSOR_SCALAR_MODE needs the scalar src1 overload");
    }
    const uint8_t* m = check_select("Select", dst, selMask, src0, selMode, count, loc);
    check_operand("Select", "src1", src1.sim_view(), count, loc);
    const uint32_t period = selMode == SELMODE::VSEL_CMPMASK_SPR ? kRepeatBytes / sizeof(T) : 0xffffffffu;
    T* d = dst.sim_ptr;
    const T* a = src0.sim_ptr;
    const T* b = src1.sim_ptr;
    count_vec(VecOp::Select, sizeof(T), count);
    prop_select_defined(d, m, a, b, count, period);
    {
        const uint64_t bits = period < count ? period : count;
        RaceOp op(Pipe::V, "Select", loc);
        op.read(m, (bits + 7) / 8).read(a, uint64_t(count) * sizeof(T)).read(b, uint64_t(count) * sizeof(T)).write(d, uint64_t(count) * sizeof(T));
    }
    // VSEL_CMPMASK_SPR: one repeat's bits (64 or 128, a power of two) reused for every repeat
    select_loop(d, m, a, [b](uint32_t i) { return b[i]; }, count, period >= count ? 0xffffffffu : period - 1);
}

template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, std::type_identity_t<T> src1,
                   SELMODE selMode, uint32_t count, std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(is_any_of_v<T, half, float>, "AscendC::Select: unsupported dtype");
    if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE) {
        touch(loc);
        fatal("PARAM-RANGE", loc, "Select with a scalar src1 needs SELMODE::VSEL_TENSOR_SCALAR_MODE");
    }
    const uint8_t* m = check_select("Select", dst, selMask, src0, selMode, count, loc);
    T* d = dst.sim_ptr;
    const T* a = src0.sim_ptr;
    const T s = src1;
    count_vec(VecOp::Select, sizeof(T), count);
    prop_select_defined<T>(d, m, a, nullptr, count, 0xffffffffu);
    race_v("Select", loc, d, uint64_t(count) * sizeof(T), m, (uint64_t(count) + 7) / 8, a, uint64_t(count) * sizeof(T));
    select_loop(d, m, a, [s](uint32_t) { return s; }, count, 0xffffffffu);
}

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_VEC_H
