// ascend_sim/core.h - configuration macros, keywords, enums, half/bfloat16_t, fault reporting and
// the GM allocation registry of the AscendC CPU emulator (see docs/emulator.md).
//
// Written from the semantics described in /work/shared/reference/ascendc.md (cited as "ref §N");
// no CANN / asc-devkit / asc-tools code is used.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_CORE_H
#define ASCEND_SIM_ASCEND_SIM_CORE_H

// Only headers that do not declare C library functions such as tanh / exp / abs / div in the global
// namespace are included (kernels may be named like them): no <cmath>, <cstdlib>, <functional>;
// math goes through GCC builtins.
#include <bit>
#include <csignal>
#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <new>
#include <source_location>
#include <type_traits>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// Runtime functions (reporting, Launch, DMA / bookkeeping helpers that do not depend on the kernel's
// types) are declared with ASCEND_SIM_RT. By default they are defined inline in these headers
// (header-only use: `g++ kernel.cpp`). compile_program instead links a runtime object prebuilt once
// per flag set (npu_harness/sim/runtime.cpp) and defines ASCEND_SIM_PREBUILT_RUNTIME, so a kernel's
// translation unit only compiles what depends on the kernel.
#if defined(ASCEND_SIM_PREBUILT_RUNTIME)
#define ASCEND_SIM_RT
#else
#define ASCEND_SIM_RT inline
#endif

// ---------------------------------------------------------------------------------------------
// Target macros (docs/emulator-contract.md). Defaults are the Atlas A2 (910B, dav-2201) values.
// ---------------------------------------------------------------------------------------------
#ifndef ASCEND_SIM_UB_BYTES
#define ASCEND_SIM_UB_BYTES 196608  // 192 KB UB per vector core on A2 (ref §5.1)
#endif
#ifndef ASCEND_SIM_HAS_DATACOPYPAD
#define ASCEND_SIM_HAS_DATACOPYPAD 1  // DataCopyPad: A2/A3 yes, 310P/910 no (ref §4.1)
#endif
#ifndef ASCEND_SIM_MAX_BLOCKS
#define ASCEND_SIM_MAX_BLOCKS 48  // AIV count of 910B1/B2 (ref §5.2)
#endif
#ifndef __NPU_ARCH__
#define __NPU_ARCH__ 2201
#endif
// Cube-side buffers (ref §5.1: A2 L1 512 KB, L0A/L0B 64 KB, L0C 128 KB; 310P: L1 1 MB, L0C 256 KB).
// TPipe::InitBuffer on A1/B1/C1 counts against L1, A2 against L0A, B2 against L0B, CO1 against L0C.
#ifndef ASCEND_SIM_L1_BYTES
#define ASCEND_SIM_L1_BYTES 524288
#endif
#ifndef ASCEND_SIM_L0A_BYTES
#define ASCEND_SIM_L0A_BYTES 65536
#endif
#ifndef ASCEND_SIM_L0B_BYTES
#define ASCEND_SIM_L0B_BYTES 65536
#endif
#ifndef ASCEND_SIM_L0C_BYTES
#define ASCEND_SIM_L0C_BYTES 131072
#endif
// Default wall-clock limit of one Launch in seconds (watchdog): past it the run stops with
// error[TIME-LIMIT]. The environment variable ASCEND_SIM_TIME_LIMIT overrides it at run time.
#ifndef ASCEND_SIM_HANG_SECONDS
#define ASCEND_SIM_HANG_SECONDS 120
#endif
// Stack of each block's coroutine (lazily committed host memory).
#ifndef ASCEND_SIM_STACK_BYTES
#define ASCEND_SIM_STACK_BYTES (8u << 20)
#endif

// Address-space / function qualifiers of the bisheng compiler are defined away (as CPU debug mode
// does, ref §6).
#define __aicore__
#define __global__
#define __gm__
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#define __fbuf__
#define __sync_alias__
#define __sync_noalias__
#define __sync_out__
#define __sync_in__
#define __inout_pipe__(...)
#define __in_pipe__(...)
#define __out_pipe__(...)

// GM_ADDR is `__gm__ uint8_t*` (ref §1.1).
#define GM_ADDR __gm__ uint8_t*

// KERNEL_TASK_TYPE_DEFAULT(type) selects the core type on CANN 8 (ref §1.1); a no-op here. It is a
// declaration so that it is valid both as a statement and at namespace scope.
#define KERNEL_TASK_TYPE_DEFAULT(x) static_assert(true, "")
#define KERNEL_TASK_TYPE(key, x) static_assert(true, "")

// Core type of the running block (CANN: `g_coreType == AIV / AIC`, devkit impl/utils/sys_macros.h). A run-time
// test here: an AIC_MODE launch runs AIC blocks; a MIX launch of a program that uses the cross-core flags runs each
// AI Core as one AIC + 2 AIV blocks (ascend_sim/crossflag.h); every other block is an AIV.
#define ASCEND_IS_AIV (!::AscendC::sim::detail::is_aic())
#define ASCEND_IS_AIC (::AscendC::sim::detail::is_aic())

enum KernelMetaType {
    KERNEL_TYPE_AIV_ONLY,
    KERNEL_TYPE_AIC_ONLY,
    KERNEL_TYPE_MIX_AIV_1_0,
    KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1,
    KERNEL_TYPE_MIX_AIC_1_2,
    KERNEL_TYPE_AICORE,
    KERNEL_TYPE_VECTORCORE,
    KERNEL_TYPE_MIX_AICORE,
    KERNEL_TYPE_MIX_VECTOR_CORE,
};

// pipe_t and event_t are compiler built-in enums (global scope) on the real toolchain (ref §4.4).
enum pipe_t {
    PIPE_S = 0,
    PIPE_V,
    PIPE_M,
    PIPE_MTE1,
    PIPE_MTE2,
    PIPE_MTE3,
    PIPE_ALL,
    PIPE_MTE4,
    PIPE_MTE5,
    PIPE_V2,
    PIPE_FIX,
};

enum event_t {
    EVENT_ID0 = 0,
    EVENT_ID1,
    EVENT_ID2,
    EVENT_ID3,
    EVENT_ID4,
    EVENT_ID5,
    EVENT_ID6,
    EVENT_ID7,
};

// ---------------------------------------------------------------------------------------------
// half / bfloat16_t: 16-bit storage, float <-> 16-bit conversion with round-to-nearest-even.
// ---------------------------------------------------------------------------------------------
namespace AscendC::sim::detail {

// IEEE binary16 -> binary32 (exact).
constexpr float half_bits_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t em = h & 0x7fffu;
    if (em < 0x0400u) {  // zero or subnormal: em * 2^-24 is exact in float
        const float v = float(em) * 5.9604644775390625e-08f;
        return sign ? -v : v;
    }
    uint32_t bits;
    if (em >= 0x7c00u) {
        bits = 0x7f800000u | ((em & 0x3ffu) << 13);  // inf / nan (payload kept)
    } else {
        bits = (em << 13) + ((127u - 15u) << 23);  // normal: rebias exponent
    }
    return std::bit_cast<float>(bits | sign);
}

// binary32 -> binary16, round to nearest, ties to even; overflow -> inf; NaN -> quiet NaN.
constexpr uint16_t float_to_half_bits(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) {
        return ax > 0x7f800000u ? uint16_t(sign | 0x7e00u | ((ax >> 13) & 0x3ffu)) : uint16_t(sign | 0x7c00u);
    }
    if (ax >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to inf
    if (ax < 0x38800000u) {
        // |f| < 2^-14: the result is a half subnormal (or zero), whose spacing is 2^-24. Adding 0.5
        // puts the value in [0.5, 1) where the float spacing is also 2^-24, so the FPU's own
        // round-to-nearest-even does the rounding; the low mantissa bits are then the half bits.
        const float t = std::bit_cast<float>(ax) + 0.5f;
        return uint16_t(sign | (std::bit_cast<uint32_t>(t) - 0x3f000000u));
    }
    const uint32_t odd = (ax >> 13) & 1u;
    ax += 0xc8000fffu + odd;  // exponent -= 112 (mod 2^32) plus the RNE rounding bias
    return uint16_t(sign | (ax >> 13));
}

constexpr float bf16_bits_to_float(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

constexpr uint16_t float_to_bf16_bits(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x0040u);  // quiet NaN
    x += 0x7fffu + ((x >> 16) & 1u);                                              // RNE
    return uint16_t(x >> 16);
}

// double -> float rounding to odd; a following float -> 16-bit RNE rounding is then correct
// (no double-rounding error) because float keeps more than 2 extra bits.
constexpr float double_to_float_odd(double d) {
    float f = static_cast<float>(d);
    if (d != d || static_cast<double>(f) == d) return f;
    uint32_t b = std::bit_cast<uint32_t>(f);
    if ((b & 1u) == 0u) {
        const bool magnitudeTooBig = (f < 0 ? -static_cast<double>(f) : static_cast<double>(f)) > (d < 0 ? -d : d);
        b = magnitudeTooBig ? b - 1u : b + 1u;
    }
    return std::bit_cast<float>(b);
}

template <class A>
constexpr float arith_to_float_for16(A v) {
    if constexpr (std::is_floating_point_v<A> && sizeof(A) > sizeof(float)) {
        return double_to_float_odd(static_cast<double>(v));
    } else {
        return static_cast<float>(v);
    }
}

}  // namespace AscendC::sim::detail

struct bfloat16_t;

struct half {
    uint16_t sim_bits;

    half() = default;
    template <class A, std::enable_if_t<std::is_arithmetic_v<A>, int> = 0>
    constexpr half(A v) : sim_bits(AscendC::sim::detail::float_to_half_bits(AscendC::sim::detail::arith_to_float_for16(v))) {}
    constexpr explicit half(bfloat16_t v);
    constexpr operator float() const { return AscendC::sim::detail::half_bits_to_float(sim_bits); }

    static constexpr half FromBits(uint16_t b) {
        half h{};
        h.sim_bits = b;
        return h;
    }
    template <class A> half& operator+=(const A& o) { return *this = half(float(*this) + float(o)); }
    template <class A> half& operator-=(const A& o) { return *this = half(float(*this) - float(o)); }
    template <class A> half& operator*=(const A& o) { return *this = half(float(*this) * float(o)); }
    template <class A> half& operator/=(const A& o) { return *this = half(float(*this) / float(o)); }
};

struct bfloat16_t {
    uint16_t sim_bits;

    bfloat16_t() = default;
    template <class A, std::enable_if_t<std::is_arithmetic_v<A>, int> = 0>
    constexpr bfloat16_t(A v) : sim_bits(AscendC::sim::detail::float_to_bf16_bits(AscendC::sim::detail::arith_to_float_for16(v))) {}
    constexpr explicit bfloat16_t(half v) : bfloat16_t(static_cast<float>(v)) {}
    constexpr operator float() const { return AscendC::sim::detail::bf16_bits_to_float(sim_bits); }

    static constexpr bfloat16_t FromBits(uint16_t b) {
        bfloat16_t h{};
        h.sim_bits = b;
        return h;
    }
    template <class A> bfloat16_t& operator+=(const A& o) { return *this = bfloat16_t(float(*this) + float(o)); }
    template <class A> bfloat16_t& operator-=(const A& o) { return *this = bfloat16_t(float(*this) - float(o)); }
    template <class A> bfloat16_t& operator*=(const A& o) { return *this = bfloat16_t(float(*this) * float(o)); }
    template <class A> bfloat16_t& operator/=(const A& o) { return *this = bfloat16_t(float(*this) / float(o)); }
};

constexpr half::half(bfloat16_t v) : half(static_cast<float>(v)) {}

static_assert(sizeof(half) == 2 && std::is_trivially_copyable_v<half>);
static_assert(sizeof(bfloat16_t) == 2 && std::is_trivially_copyable_v<bfloat16_t>);

namespace AscendC {

using ::bfloat16_t;
using ::half;

// ---------------------------------------------------------------------------------------------
// Enums of the API subset.
// ---------------------------------------------------------------------------------------------
// TPosition values (ref §1.2); VECCALC is also called LCM.
enum class TPosition : uint8_t {
    GM,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    C2PIPE2GM,
    C2PIPE2LOCAL,
    MAX,
};
using QuePosition = TPosition;

// HardEvent names read SRC_DST (ref §4.4).
enum class HardEvent : uint8_t {
    MTE2_MTE1,
    MTE1_MTE2,
    MTE1_M,
    M_MTE1,
    MTE2_V,
    V_MTE2,
    MTE3_V,
    V_MTE3,
    M_V,
    V_M,
    V_V,
    MTE3_MTE1,
    MTE1_MTE3,
    MTE1_V,
    MTE2_M,
    M_MTE2,
    V_MTE1,
    M_FIX,
    FIX_M,
    MTE3_MTE2,
    MTE2_MTE3,
    S_V,
    V_S,
    S_MTE2,
    MTE2_S,
    S_MTE3,
    MTE3_S,
    MTE2_FIX,
    FIX_MTE2,
    FIX_S,
    M_S,
    FIX_MTE3,
    MTE1_FIX,
    FIX_MTE1,
    FIX_FIX,
    MAX,
};
using TEventID = int8_t;

// Cast rounding modes (ref §4.2).
enum class RoundMode : uint8_t {
    CAST_NONE = 0,
    CAST_RINT,   // round to nearest, ties to even
    CAST_FLOOR,  // toward -inf
    CAST_CEIL,   // toward +inf
    CAST_ROUND,  // to nearest, ties away from zero
    CAST_TRUNC,  // toward zero
    CAST_ODD,    // von Neumann rounding (to odd)
};

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };

enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

enum class CacheLine : uint64_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint64_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };

// ---------------------------------------------------------------------------------------------
// Emulator runtime state and fault reporting.
// ---------------------------------------------------------------------------------------------
class TPipe;

namespace sim::detail {

inline constexpr uint32_t kNumHardEvents = static_cast<uint32_t>(HardEvent::MAX);
inline constexpr uint32_t kMaxEventIds = 8;  // EVENT_ID0..EVENT_ID7
inline constexpr uint32_t kMaxBuffers = 64;  // "at most 64 buffers in total per kernel" (ref §1.3)
inline constexpr uint32_t kUbAlign = 32;     // UB operand alignment (ref §4.5)

inline const char* const kHardEventNames[kNumHardEvents] = {
    "MTE2_MTE1", "MTE1_MTE2", "MTE1_M",   "M_MTE1",   "MTE2_V",   "V_MTE2",    "MTE3_V",   "V_MTE3",   "M_V",
    "V_M",       "V_V",       "MTE3_MTE1", "MTE1_MTE3", "MTE1_V",   "MTE2_M",    "M_MTE2",   "V_MTE1",   "M_FIX",
    "FIX_M",     "MTE3_MTE2", "MTE2_MTE3", "S_V",      "V_S",      "S_MTE2",    "MTE2_S",   "S_MTE3",   "MTE3_S",
    "MTE2_FIX",  "FIX_MTE2",  "FIX_S",    "M_S",      "FIX_MTE3", "MTE1_FIX",  "FIX_MTE1", "FIX_FIX",
};

struct Fault {};  // thrown by fatal(); caught by sim::Launch (the block stops)
struct AicServerDone {};  // the AIC of a MIX launch reached REGIST_MATMUL_OBJ: it serves the AIV and ends (not a fault)

struct FlagSlot {
    uint32_t count;
    std::source_location loc;
};

class QueBase;
struct RaceState;  // race.h: per-block pipe-race bookkeeping

// ---- per-block performance counters (printed as one `sim-counters: {json}` stderr line by Launch) ----
// Vector instruction classes: one counter pair (instructions, 256-B repeats) per (op, element size).
enum class VecOp : uint8_t {
    Add, Sub, Mul, Div, Max, Min, Adds, Muls, Maxs, Mins, LeakyRelu, Exp, Ln, Abs, Sqrt, Rsqrt, Reciprocal, Relu,
    Duplicate, Cast, Compare, Compares, Select, Copy, ReduceSum, ReduceMax, ReduceMin, WholeReduceSum, BlockReduceSum,
    WholeReduceMax, WholeReduceMin, BlockReduceMax, BlockReduceMin, PairReduceSum, Gather, GatherMask, Sort32, MrgSort,
    CreateVecIndex, Brcb, Transpose, TransDataTo5HD,
    CastF32ToF16,  // Cast float -> half: its own class (§5.5 CONV f32->f16 1 cycle per repeat, f16->f32 2)
    kCount
};
inline const char* const kVecOpNames[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Adds", "Muls", "Maxs", "Mins", "LeakyRelu",
                                          "Exp", "Ln", "Abs", "Sqrt", "Rsqrt", "Reciprocal", "Relu", "Duplicate", "Cast", "Compare",
                                          "Compares", "Select", "Copy", "ReduceSum", "ReduceMax", "ReduceMin", "WholeReduceSum",
                                          "BlockReduceSum", "WholeReduceMax", "WholeReduceMin", "BlockReduceMax", "BlockReduceMin",
                                          "PairReduceSum", "Gather", "GatherMask", "Sort32", "MrgSort", "CreateVecIndex", "Brcb",
                                          "Transpose", "TransDataTo5HD", "CastF32ToF16"};
inline constexpr uint32_t kVecOps = static_cast<uint32_t>(VecOp::kCount);
static_assert(sizeof(kVecOpNames) / sizeof(kVecOpNames[0]) == kVecOps);
inline constexpr uint32_t kSizeClasses = 4;   // element size 1, 2, 4, 8 B
inline constexpr uint32_t kBurstBuckets = 16; // DMA burst sizes: bucket k holds bursts of (16 << k, 32 << k] B; last: larger

struct DmaCounters {
    uint64_t bytes = 0;      // payload bytes moved
    uint64_t transfers = 0;  // DMA instructions (DataCopy / DataCopyPad calls)
    uint64_t bursts = 0;     // contiguous blocks (blockCount per instruction)
    uint64_t burstCount[kBurstBuckets]{};
    uint64_t burstBytes[kBurstBuckets]{};
};

// MTE2 re-reads (impl/reuse_rt.h, the cost model's L2 rule for vector re-reads): the GM spans this block read (not
// workspace), each with the block's GM traffic clock at the read (the bytes it had moved GM <-> UB / L1 / L0C before);
// at the end of the launch every read of bytes read before, by this block or another, is counted for its block by
// reuse distance: the clock difference to the closest earlier read of them (ASSUMPTION: the cores move GM bytes at
// one pace, so clocks of different blocks compare). Bucket k holds distances in (2^(k-1), 2^k] B. A block logs at
// most kReuseMaxSpans spans (later reads are not logged: only less credit).
inline constexpr uint32_t kReuseBuckets = 48;
inline constexpr size_t kReuseMaxSpans = size_t(1) << 14;
struct ReuseSpan {
    uintptr_t begin, end;
    uint64_t clock;
};
struct ReuseCounters {
    std::vector<ReuseSpan> reads;  // what this block read, in order, with its clock
    uint64_t bytes[kReuseBuckets]{};
};

// The cube's operand loads (impl/panel_reuse_rt.h, the cost model's L2 rule for operand re-reads beyond one launch's
// union): every panel a Matmul block loads into L1 (A rows, B columns or the bias, over its K; not workspace), keyed by
// its GM layout (first byte, rows, bytes per row, row pitch), with the block's GM traffic clock (as ReuseCounters).
// At the end of the launch each re-load of a panel is counted for its block by LRU stack distance: the distinct panel
// bytes loaded by any block since its last load, plus the other GM traffic (not operand loads, not workspace) the
// active blocks moved in that clock interval. Bucket k holds distances in (2^(k-1), 2^k] B. A block logs at most
// kReuseMaxSpans panels; past that the launch counts no re-load (unlogged loads would shorten the distances).
struct PanelLoad {
    uintptr_t at;
    uint64_t rows, rowBytes, pitch;
    uint64_t clock;
};
struct PanelReuse {
    std::vector<PanelLoad> loads;
    bool truncated = false;  // the log reached kReuseMaxSpans
    uint64_t bytes[kReuseBuckets]{};
};

struct Counters {
    DmaCounters gm2ub, ub2gm, ub2ub;
    uint64_t atomicBytes = 0;                       // UB->GM bytes written with SetAtomicAdd on
    uint64_t vecInstr[kVecOps][kSizeClasses]{};
    uint64_t vecRepeats[kVecOps][kSizeClasses]{};
    uint64_t ubGet = 0, ubSet = 0, gmGet = 0, gmSet = 0;  // scalar accesses
    uint64_t cubeMacs = 0;                          // Matmul: multiply-adds issued to the cube unit (16x16x16 fractals)
    uint64_t cubeMacsF32 = 0;                       // ... of them with fp32 operands (the cube runs fp32 at 1/4 rate)
    uint64_t cubeMacsUseful = 0, cubeMacsUsefulF32 = 0;  // the same without the fractal padding (rows x cols x K)
    uint64_t gm2l1 = 0;                             // Matmul: operand bytes read from GM into L1 (cube MTE2)
    uint64_t cubeMacsAsync = 0, gm2l1Async = 0;     // ... of them issued by IterateAll<false> (the AIV does not wait for them)
    // Matmul: the GM extents (address, bytes) of the operands of each computation; the counters line prints the
    // bytes of their union over all blocks (`cube_operand_bytes`: what the launch's cube reads at least once)
    std::vector<std::pair<uintptr_t, uint64_t>> cubeOperands;
    uint64_t l0c2gm = 0;                            // Matmul: result bytes written from L0C to GM (IterateAll, GetTensorC to GM)
    uint64_t l0c2gmN = 0;                           // ... the instructions that wrote them (Fixpipe calls; the Matmul API: one per
                                                    // base block written), each a DMA instruction on the FIX pipe (cost model)
    uint64_t l0c2gmUnitFlag = 0;                    // ... of the bytes, those the Matmul API wrote with UnitFlag on (CFG_NORM):
                                                    // Fixpipe drains L0C while the next Mmad fills it
    // ... of the GM traffic above, the bytes inside the launch's workspace tensors (sim::GmTrackUninit regions: the
    // cost model keeps them in L2 when the regions fit it)
    uint64_t wsGm2ub = 0, wsUb2gm = 0, wsGm2l1 = 0, wsL0c2gm = 0;
    ReuseCounters reuse;                            // MTE2 re-reads by reuse distance (above)
    PanelReuse panels;                              // Matmul: GM -> L1 panel re-loads by stack distance (above)
    uint64_t mte1Cycles = 0;                        // LoadData L1 -> L0A / L0B: cycles at the documented load bandwidth (MTE1)
    uint64_t syncAll = 0;
    uint64_t crossSets = 0, crossWaits = 0;  // CrossCoreSetFlag / CrossCoreWaitFlag calls (crossflag.h)
    uint32_t inBufsMin = 0xffffffffu, outBufsMin = 0xffffffffu;  // smallest `num` of a VECIN / VECOUT queue
    uint32_t inQueues = 0, outQueues = 0;  // number of VECIN / VECOUT queues initialised (DMA streams)
    // SetFlag calls per HardEvent and the event ids they used (a bit per id): a cube kernel that alternates two ids on
    // its L1 and L0 hand-offs ping-pongs two buffers (the cost model's overlap rule for cube kernels)
    uint64_t flagSets[kNumHardEvents]{};
    uint8_t flagIds[kNumHardEvents]{};
};

inline uint32_t size_class(uint32_t esize) { return esize <= 1 ? 0 : esize == 2 ? 1 : esize <= 4 ? 2 : 3; }

inline void count_dma(DmaCounters& c, uint64_t bursts, uint64_t burstBytes) {
    if (bursts == 0 || burstBytes == 0) return;
    c.bytes += bursts * burstBytes;
    c.transfers += 1;
    c.bursts += bursts;
    uint32_t k = 0;
    while (k + 1 < kBurstBuckets && burstBytes > (uint64_t(32) << k)) ++k;
    c.burstCount[k] += bursts;
    c.burstBytes[k] += bursts * burstBytes;
}

// One GM byte interval a block accessed (for the cross-block checks at the end of a launch phase).
struct GmSpan {
    uintptr_t begin, end;
    const char* api;
    std::source_location loc;
    uint32_t epoch = 0;  // the block's own cross-core clock at the access (crossflag.h; 0 in launches without the AIC)
};

// A fault report of one block, kept until the end of the launch: reports are printed in block order,
// so the output does not depend on how the blocks were scheduled onto threads.
struct PendingReport {
    const char* code;
    const char* file;
    uint32_t line;
    uint32_t msgOff;            // offset of the first occurrence's message in State::reportText
    unsigned long long count;   // occurrences at this (code, file, line) in this block
};

// The vector mask register (ref_next §4.3): Normal mode with a 128-bit mask, or Counter mode.
struct VecMask {
    bool counter = false;  // SetMaskCount() / SetMaskNorm()
    bool explicitSet = false;
    uint64_t hi = ~0ull, lo = ~0ull;  // Normal: lane bits; Counter: lo = element count
};

// Everything one block (one AI core) owns. The running block's state is reached through the
// thread-local t_cur (blocks may run in parallel threads); code outside blocks uses g_host.
struct CrossState;  // impl/crossflag_rt.h: a block's cross-core flag clock and history

struct State {
    bool inBlock = false;
    bool blockFaulted = false;
    uint32_t blockIdx = 0;
    bool isAic = false;     // this block is a cube core (AIC_MODE launch, or the AIC of a MIX launch that runs it)
    uint32_t coreIdx = 0;   // the AI Core (launched block) this block belongs to
    uint32_t matmulObjs = 0;  // Matmul objects registered by this block (the flag ids they reserve, ref_next §2.4)
    CrossState* cross = nullptr;  // cross-core flag bookkeeping (MIX launches that run the AIC)
    uint8_t* ub = nullptr;
    uint64_t ubHigh = 0;  // end of the highest UB byte any InitBuffer of this block reserved (the arena's used part)
    std::source_location lastLoc{};
    FlagSlot flags[kNumHardEvents][kMaxEventIds]{};
    std::vector<QueBase*> liveQueues;
    TEventID nextEventId[kNumHardEvents]{};
    // atomic mode of UB->GM copies (SetAtomicAdd<T> / SetAtomicNone)
    void (*atomicAdd)(void* gm, const void* ub, uint64_t bytes, const std::source_location& loc) = nullptr;
    const char* atomicType = nullptr;
    uint64_t atomicTurn = 0;  // the launch phase (+1) in which this block last took its turn for atomic adds (atomic_turn)
    Counters cnt;
    TPipe* curPipe = nullptr;      // GetTPipePtr()
    uint8_t* cubeArena = nullptr;  // this block's L1 / L0A / L0B / L0C (allocated on first use)
    std::vector<GmSpan> gmWrites, gmAtomics, gmReads;  // this launch phase's GM accesses
    std::vector<GmSpan> gmAtomicsAll;                  // every atomic add of the launch (order check)
    std::vector<GmSpan> asyncResults;  // GM results of IterateAll<false>(..., waitIterateAll = true) not yet waited for
    std::vector<PendingReport> reports;
    std::vector<char> reportText;
    VecMask mask;
    RaceState* race = nullptr;
    // TILING_KEY_IS: whether this block tested the tiling key, and whether a test matched
    bool keyTested = false, keyMatched = false;
    std::source_location keyLoc{};
};

struct LaunchInfo {
    bool inLaunch = false;
    uint32_t blockDim = 1;       // blocks of the running launch (AIV count in MIX mode)
    uint32_t mixRatio = 1;       // AIV blocks per launched block: 2 in MIX mode (1 AIC : 2 AIV), else 1
    uint32_t launched = 1;       // blocks the kernel was launched with (AI Cores in MIX mode)
    bool aicRuns = false;        // MIX launch whose AIC run as blocks too (slots [mixRatio * launched, +launched))
    bool aicMode = false;        // AIC_MODE launch: every block is an AIC
    bool quiet = false;          // a repeated run (order check): reports are not collected
    std::vector<State*> blocks;  // the launch's block states
};

inline LaunchInfo g_launch;
inline bool g_fp16Overflow = false;  // ASCEND_SIM_FP16_OVERFLOW=1: report half results that overflow to inf
inline State g_host;                       // state of code that runs outside any block
inline thread_local State* t_cur = nullptr;  // the block running on this thread
inline State& st() {
    State* p = t_cur;
    return p ? *p : g_host;
}
inline bool is_aic() { return st().isAic; }

// A kernel in this program uses an API whose result depends on the order in which blocks run
// (SetAtomicAdd: float sums): its blocks then run one at a time in block order, so results stay
// reproducible. Set at program start by instantiating the API's template. (The Matmul API's atomic
// writes do not need it: they wait for their turn in block order instead, atomic_turn.)
inline bool g_serialBlocks = false;
template <class Tag>
struct SerialBlocks {
    static inline const bool on = (g_serialBlocks = true);
};

// Error reporting. Inside a launch a report is kept with the block that raised it and printed at the
// end of the launch (first occurrence per (code, file, line) in block order, then a note with the
// number of suppressed repeats); outside a launch it is printed at once.
ASCEND_SIM_RT void vreport(const char* code, const std::source_location& loc, const char* fmt, va_list ap);

// Non-fatal error: reported (and counted); execution continues.
[[gnu::format(printf, 3, 4)]] ASCEND_SIM_RT void report(const char* code, const std::source_location& loc, const char* fmt, ...);

// Fatal error: reported, then the current block stops (the faulting access is not performed).
[[noreturn]] [[gnu::format(printf, 3, 4)]] ASCEND_SIM_RT void fatal(const char* code, const std::source_location& loc, const char* fmt, ...);

// A report attributed to block `b` (used by the end-of-phase checks, which run outside the blocks).
[[gnu::format(printf, 4, 5)]] ASCEND_SIM_RT void report_for(uint32_t b, const char* code, const std::source_location& loc,
                                                           const char* fmt, ...);

inline const char* base_name(const char* path) {
    const char* s = std::strrchr(path, '/');
    return s ? s + 1 : path;
}

inline void touch(const std::source_location& loc) { st().lastLoc = loc; }

inline Counters& cnt() { return st().cnt; }

inline constexpr uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// ---------------------------------------------------------------------------------------------
// GM allocation registry (sim::GmAlloc / GmFree). Every GM access must lie inside a live one.
// Allocations change only outside launches, so blocks read the registry without a lock.
// ---------------------------------------------------------------------------------------------
struct GmChunk {
    uint64_t size;       // bytes
    uint64_t mapped = 0;  // > 0: a file mapping of this many bytes (GmMapInput), else heap
    int outFd = -1;       // >= 0: GmMapOutput's file, written from this memory by GmFree (or at a crash / exit)
};

inline std::map<uintptr_t, GmChunk> g_gmAllocs;  // begin -> chunk
inline uint64_t g_gmGeneration = 0;               // bumped by every GmAlloc / GmFree

// Finds the live allocation with the greatest begin <= addr. Returns false if there is none.
ASCEND_SIM_RT bool gm_floor(uintptr_t addr, uintptr_t& begin, uint64_t& size);

// GM accesses of the current launch phase, for the cross-block checks (GM-RACE).
ASCEND_SIM_RT void gm_mark_write(const char* api, const void* gmPtr, uint64_t bytes, const std::source_location& loc);
ASCEND_SIM_RT void gm_mark_atomic(const char* api, const void* gmPtr, uint64_t bytes, const std::source_location& loc);
ASCEND_SIM_RT void gm_mark_read(const char* api, const void* gmPtr, uint64_t bytes, const std::source_location& loc);
// Before an atomic add into GM from a launch whose blocks run in parallel threads: waits until every block
// with a lower index has ended or reached this phase's SyncAll, so the adds of one phase happen in block
// order (as with one thread) and their float sums do not depend on the threads' timing. Returns at once
// with one thread, outside a launch, or when the block already took its turn in this phase.
ASCEND_SIM_RT void atomic_turn();
// `gmPtr` lies in a workspace-tensor region (sim::GmTrackUninit); the regions' total bytes
ASCEND_SIM_RT bool gm_in_workspace(const void* gmPtr);
ASCEND_SIM_RT void count_reuse(const uint8_t* gm, uint32_t count, uint64_t blockBytes, uint64_t pitch);
ASCEND_SIM_RT void count_panel(const void* gm, uint64_t rows, uint64_t rowBytes, uint64_t pitch);
ASCEND_SIM_RT uint64_t gm_workspace_bytes();
// The running block's own cross-core clock (impl/crossflag_rt.h): GM accesses are tagged with it so that the
// end-of-launch GM-RACE check of a MIX launch that runs the AIC can order them by set -> wait edges. 0 elsewhere.
ASCEND_SIM_RT uint32_t cross_epoch();

}  // namespace sim::detail

namespace sim {

// Allocates `bytes` of emulated GM (filled with 0xFF so unwritten output reads as NaN / -1) and
// registers it for the GM-OOB checks. Returns nullptr on failure.
ASCEND_SIM_RT uint8_t* GmAlloc(size_t bytes);
ASCEND_SIM_RT void GmFree(void* p, std::source_location loc = std::source_location::current());

// GM holding the first `bytes` bytes of the file at `path`, mapped copy-on-write (the file is never
// modified): a launch's inputs without copying them. Returns nullptr (after printing error[LAUNCH]) if
// the file cannot be read or is shorter than `bytes`. Release with GmFree.
ASCEND_SIM_RT uint8_t* GmMapInput(const char* path, size_t bytes);
// GM for the file at `path` (created, or sized to `bytes`), poisoned with 0xFF like GmAlloc: what the
// kernel writes is in the file once GmFree releases it (also written if the program crashes, hits the
// time limit or exits without GmFree). Returns nullptr (after printing error[LAUNCH]) on failure.
ASCEND_SIM_RT uint8_t* GmMapOutput(const char* path, size_t bytes);
// Driver-side (not an AscendC API): GM bytes [p, p + bytes) start undefined, e.g. a multi-stage kernel's
// workspace tensors. A kernel read (DataCopy / DataCopyPad, a Matmul operand, GetValue) of bytes of such a
// region that no write (DataCopy / DataCopyPad UB->GM, IterateAll, Fixpipe, SetValue, atomic adds) has
// reached is reported as GM-UNINIT at the read. Cleared by GmUntrackAll().
ASCEND_SIM_RT void GmTrackUninit(const void* p, size_t bytes);
ASCEND_SIM_RT void GmUntrackAll();

}  // namespace sim

// Kernel type of the next sim::Launch, as CANN's CPU debug mode sets it (ref §6). MIX_MODE runs every
// launched block as one AIC + 2 AIV (ref §3 "MIX 1:2"): the kernel body runs on the 2 AIV of each
// group; the cube work is done inside the Matmul API the AIV drive (ascend_sim/matmul.h). In a program that uses the
// cross-core flags (crossflag.h) the body runs on the AIC of each group as well.
enum class KernelMode { AIC_MODE, AIV_MODE, MIX_MODE };
inline KernelMode g_simKernelMode = KernelMode::AIV_MODE;
inline void SetKernelMode(KernelMode mode) { g_simKernelMode = mode; }

// Block index / count (ref §1.2, §1.5). In MIX mode GetBlockIdx() numbers the AIV of the launch
// (launched block x 2 + sub-block), GetBlockNum() the launched blocks.
// On the AIC of a MIX launch (crossflag.h) GetBlockIdx() is the AI Core's index in [0, GetBlockNum()) and
// GetSubBlockIdx() = 0, GetSubBlockNum() = GetTaskRation() = 1 (CANN GetTaskRation table, atlasascendc_api_07_0188:
// MIX_AIC_1_2 returns 2 on the AIV, 1 on the AIC; an AIC has no sub-blocks).
inline int64_t GetBlockIdx() {
    const sim::detail::State& s = sim::detail::st();
    return static_cast<int64_t>(s.isAic && sim::detail::g_launch.aicRuns ? s.coreIdx : s.blockIdx);
}
inline int64_t GetBlockNum() { return static_cast<int64_t>(sim::detail::g_launch.launched); }
inline int64_t GetSubBlockIdx() {
    const sim::detail::State& s = sim::detail::st();
    return s.isAic ? 0 : static_cast<int64_t>(s.blockIdx % sim::detail::g_launch.mixRatio);
}
inline int64_t GetSubBlockNum() { return sim::detail::st().isAic ? 1 : static_cast<int64_t>(sim::detail::g_launch.mixRatio); }
inline int64_t GetTaskRation() { return sim::detail::st().isAic ? 1 : static_cast<int64_t>(sim::detail::g_launch.mixRatio); }
inline int64_t GetTaskRatio() { return GetTaskRation(); }

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_CORE_H
