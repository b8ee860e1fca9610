// ascend_sim/cube.h - low-level cube APIs of A2 (ref_next §1.1-§1.6): DataCopy GM (ND) -> L1 (NZ) with
// Nd2NzParams (MTE2), LoadData 2-D L1 -> L0A / L0B (MTE1), Mmad L0A x L0B -> L0C (M), Fixpipe L0C (NZ)
// -> GM (ND) (FIX). Formats (ref_next §1.2): a fractal is 16 rows x C0 = 32 B / sizeof(T) columns (512 B);
// L1 holds NZ (fractal columns major), L0A Zz (row of fractals major, each row-major), L0B Zn (each
// fractal transposed), L0C Nz with 16 x 16 float fractals. Each call is recorded for the pipe-race check
// with its pipe; the cube gets no compiler auto-sync (ref_next §5.4).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_CUBE_H
#define ASCEND_SIM_ASCEND_SIM_CUBE_H

#include "gemm.h"
#include "launch.h"
#include "pipe.h"

#include <vector>

namespace AscendC {

// GM (ND) -> L1 (NZ): ndNum matrices of nValue rows x dValue columns (ref_next §1.2).
struct Nd2NzParams {
    Nd2NzParams() {}
    Nd2NzParams(const uint16_t ndNumIn, const uint16_t nValueIn, const uint16_t dValueIn, const uint16_t srcNdMatrixStrideIn,
                const uint16_t srcDValueIn, const uint16_t dstNzC0StrideIn, const uint16_t dstNzNStrideIn, const uint16_t dstNzMatrixStrideIn)
        : ndNum(ndNumIn), nValue(nValueIn), dValue(dValueIn), srcNdMatrixStride(srcNdMatrixStrideIn), srcDValue(srcDValueIn),
          dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn), dstNzMatrixStride(dstNzMatrixStrideIn) {}
    uint16_t ndNum = 1;
    uint16_t nValue = 0;
    uint16_t dValue = 0;
    uint16_t srcNdMatrixStride = 0;  // elements between matrices in GM
    uint16_t srcDValue = 0;          // elements between rows in GM
    uint16_t dstNzC0Stride = 0;      // 32-B blocks between fractal columns in L1 (the padded row count)
    uint16_t dstNzNStride = 1;       // 32-B blocks between rows in L1
    uint16_t dstNzMatrixStride = 0;  // elements between matrices in L1
};

struct LoadData2DParams {
    LoadData2DParams() {}
    LoadData2DParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn, const uint8_t sidIn,
                     const uint16_t dstGapIn, const bool ifTransposeIn, const uint8_t addrModeIn)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), sid(sidIn), dstGap(dstGapIn),
          ifTranspose(ifTransposeIn), addrMode(addrModeIn) {}
    uint16_t startIndex = 0;   // first fractal (512 B units)
    uint8_t repeatTimes = 0;   // one fractal per repeat
    uint16_t srcStride = 0;    // fractal-to-fractal start distance in L1 (512 B units)
    uint8_t sid = 0;
    uint16_t dstGap = 0;       // gap between destination fractals (512 B units)
    bool ifTranspose = false;  // transpose each 16 x 16 fractal (b16 only)
    uint8_t addrMode = 0;
};

struct MmadParams {
    MmadParams() {}
    MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const bool isBiasIn, const int32_t fmOffsetIn,
               const bool enSsparseIn, const bool enWinogradAIn, const bool enWinogradBIn)
        : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn), enWinogradA(enWinogradAIn),
          enWinogradB(enWinogradBIn) {}
    MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const uint8_t unitFlagIn, const bool cmatrixSourceIn,
               const bool cmatrixInitValIn)
        : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn), cmatrixInitVal(cmatrixInitValIn) {}
    uint16_t m = 0, n = 0, k = 0;  // each [0, 4095]; 0: no-op
    bool isBias = false;           // deprecated: true = accumulate onto the existing C
    int32_t fmOffset = 0;
    bool enSsparse = false, enWinogradA = false, enWinogradB = false;
    uint8_t unitFlag = 0;
    bool kDirectionAlign = false;
    bool cmatrixSource = false;
    bool cmatrixInitVal = true;    // C starts from zero
};

enum QuantMode_t { NoQuant = 0, F322F16, F322BF16, DEQF16, VDEQF16, QF322B8_PRE, VQF322B8_PRE, REQ8, VREQ8 };

struct FixpipeParamsV220 {
    FixpipeParamsV220() {}
    FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn, const uint32_t dstStrideIn,
                      const bool reluEnIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn) {}
    uint16_t nSize = 0;      // N extent of the NZ block
    uint16_t mSize = 0;      // M extent
    uint16_t srcStride = 0;  // rows of 16 elements between fractal columns in L0C (normally the padded M)
    uint32_t dstStride = 0;  // ND out: elements per destination row
    QuantMode_t quantPre = NoQuant;
    uint64_t deqScalar = 0;
    uint16_t ndNum = 1, srcNdStride = 0, dstNdStride = 0;
    bool reluEn = false;
    uint8_t unitFlag = 0;
    bool isChannelSplit = false;
};

struct FixpipeConfig {
    bool nz2nd = true;
};
inline constexpr FixpipeConfig CFG_ROW_MAJOR{true};
inline constexpr FixpipeConfig CFG_NZ{false};

namespace sim::detail {

// The operand lies in memory `m` of this block's cube arena, `align`-byte aligned, with `bytes` after it.
ASCEND_SIM_RT void check_cube_operand(const char* api, const char* name, const void* p, uint64_t bytes, Mem m, uint32_t align,
                                      const std::source_location& loc);

inline uint32_t c0_of(uint32_t es) { return 32u / es; }

}  // namespace sim::detail

// GM (ND) -> L1 (NZ) (MTE2). Element (r, d) of matrix i lands at
// i * dstNzMatrixStride + (d / C0) * dstNzC0Stride * C0 + r * dstNzNStride * C0 + d % C0 (elements).
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p,
                     std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    touch(loc);
    if (p.ndNum == 0 || p.nValue == 0 || p.dValue == 0) return;
    const uint64_t C0 = c0_of(sizeof(T));
    const uint64_t cols = (p.dValue + C0 - 1) / C0;
    const uint64_t dstElems = uint64_t(p.ndNum - 1) * p.dstNzMatrixStride + (cols - 1) * p.dstNzC0Stride * C0 +
                              uint64_t(p.nValue - 1) * p.dstNzNStride * C0 + C0;
    check_cube_operand("DataCopy", "dst", dst.sim_ptr, dstElems * sizeof(T), Mem::L1, 32, loc);
    const uint64_t srcElems = uint64_t(p.ndNum - 1) * p.srcNdMatrixStride + uint64_t(p.nValue - 1) * p.srcDValue + p.dValue;
    check_gm("DataCopy", src, 0, srcElems * sizeof(T), false, loc);
    gm_mark_read("DataCopy", src.sim_ptr, srcElems * sizeof(T), loc);
    {
        RaceOp op(Pipe::MTE2, "DataCopy", loc);
        op.read(src.sim_ptr, srcElems * sizeof(T));
    }
    // the 32-byte blocks written, burst by burst: copies of one pipe that fill interleaved fractal rows of the
    // same L1 region (an image-to-column gather) touch no common byte
    for (uint32_t i = 0; i < p.ndNum; ++i) {
        const bool rowsTogether = p.dstNzNStride == 1;
        for (uint32_t r = 0; r < (rowsTogether ? 1u : uint32_t(p.nValue)); ++r) {
            race_strided(Pipe::MTE2, "DataCopy", loc, dst.sim_ptr + i * p.dstNzMatrixStride + uint64_t(r) * p.dstNzNStride * C0,
                         uint32_t(cols), (rowsTogether ? uint64_t(p.nValue) : 1u) * 32, uint64_t(p.dstNzC0Stride) * 32, true);
        }
    }
    for (uint32_t i = 0; i < p.ndNum; ++i) {
        for (uint32_t r = 0; r < p.nValue; ++r) {
            for (uint64_t d = 0; d < cols * C0; ++d) {
                T* out = dst.sim_ptr + i * p.dstNzMatrixStride + (d / C0) * p.dstNzC0Stride * C0 + uint64_t(r) * p.dstNzNStride * C0 + d % C0;
                *out = d < p.dValue ? src.sim_ptr[i * p.srcNdMatrixStride + uint64_t(r) * p.srcDValue + d] : T(0);  // rows padded to 32 B
            }
        }
    }
    // re-reads logged for the L2 credit as every GM -> UB copy's (reuse_rt.h: the cost model times this copy as MTE2)
    for (uint32_t i = 0; i < p.ndNum; ++i) {
        count_reuse(reinterpret_cast<const uint8_t*>(src.sim_ptr + uint64_t(i) * p.srcNdMatrixStride), p.nValue,
                    uint64_t(p.dValue) * sizeof(T), uint64_t(p.srcDValue) * sizeof(T));
    }
    count_dma(cnt().gm2ub, uint64_t(p.ndNum) * p.nValue, uint64_t(p.dValue) * sizeof(T));
    // of them, those from the launch's workspace (emulator.md "Counters": counted by the transfer's first byte)
    if (gm_in_workspace(src.sim_ptr)) cnt().wsGm2ub += uint64_t(p.ndNum) * p.nValue * p.dValue * sizeof(T);
}

// InitConstValue's parameters (kernel_struct_mm.h; A2 takes all four): repeatTimes iterations of blockNum
// blocks, dstGap blocks between iterations; a block is 32 B in A1 / B1 (512 B in A2 / B2).
template <typename T>
struct InitConstValueParams {
    InitConstValueParams() {}
    InitConstValueParams(const uint16_t repeatTimesIn, const uint16_t blockNumIn, const uint16_t dstGapIn, const T initValueIn)
        : repeatTimes(repeatTimesIn), blockNum(blockNumIn), dstGap(dstGapIn), initValue(initValueIn) {}
    uint16_t repeatTimes = 0;  // [0, 32767]
    uint16_t blockNum = 0;     // [0, 32767]
    uint16_t dstGap = 0;       // [0, 32767]
    T initValue = T(0);
};

// Fill an L1 (A1 / B1) tensor with a value (MTE2, like the GM -> L1 copies it precedes; the same
// create_cbuf_matrix instruction pto-isa issues before an Nd2Nz gather without a sync). dst 32-B aligned.
// The A2 / B2 (L0) form is not emulated (UNSUPPORTED) rather than guessed.
template <typename T>
inline void InitConstValue(const LocalTensor<T>& dst, const InitConstValueParams<T>& p,
                           std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "ascend-sim: InitConstValue takes half, bfloat16_t, (u)int16, float, (u)int32 (A2)");
    touch(loc);
    if (p.repeatTimes > 32767 || p.blockNum > 32767 || p.dstGap > 32767) {
        fatal("PARAM-RANGE", loc, "InitConstValue: repeatTimes = %u, blockNum = %u, dstGap = %u must each be in [0, 32767]",
              p.repeatTimes, p.blockNum, p.dstGap);
    }
    const State& s = st();
    const uint8_t* dp = reinterpret_cast<const uint8_t*>(dst.sim_ptr);
    const uint8_t* l0 = s.cubeArena ? s.cubeArena + ASCEND_SIM_L1_BYTES : nullptr;
    if (l0 && dp >= l0 && dp < l0 + ASCEND_SIM_L0A_BYTES + ASCEND_SIM_L0B_BYTES) {
        fatal("UNSUPPORTED", loc, "InitConstValue into L0A / L0B (A2 / B2) is not emulated; fill the A1 / B1 tensor and load it");
    }
    if (p.repeatTimes == 0 || p.blockNum == 0) return;
    const uint64_t bytes = (uint64_t(p.repeatTimes - 1) * (p.blockNum + p.dstGap) + p.blockNum) * 32;
    check_cube_operand("InitConstValue", "dst", dst.sim_ptr, bytes, Mem::L1, 32, loc);
    const uint64_t per = 32 / sizeof(T);
    for (uint32_t i = 0; i < p.repeatTimes; ++i) {
        T* d = dst.sim_ptr + uint64_t(i) * (p.blockNum + p.dstGap) * per;
        {
            RaceOp op(Pipe::MTE2, "InitConstValue", loc);
            op.write(d, uint64_t(p.blockNum) * 32);
        }
        for (uint64_t e = 0; e < uint64_t(p.blockNum) * per; ++e) d[e] = p.initValue;
    }
}

// L1 -> L0A / L0B, 2-D mode (MTE1): repeatTimes fractals of 512 B, source fractal startIndex + i *
// srcStride, destination fractal i * (1 + dstGap); ifTranspose transposes each 16 x 16 (b16) fractal.
template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p,
                     std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    touch(loc);
    if (p.repeatTimes == 0) return;
    if (p.ifTranspose && sizeof(T) != 2) fatal("PARAM-RANGE", loc, "LoadData: ifTranspose needs 2-byte elements (b16 fractals)");
    const State& s = st();
    const uint8_t* dp = reinterpret_cast<const uint8_t*>(dst.sim_ptr);
    const uint8_t* l0a = s.cubeArena ? s.cubeArena + ASCEND_SIM_L1_BYTES : nullptr;
    const Mem target = l0a && dp >= l0a && dp < l0a + ASCEND_SIM_L0A_BYTES ? Mem::L0A : Mem::L0B;
    const uint64_t srcBytes = (uint64_t(p.startIndex) + uint64_t(p.repeatTimes - 1) * p.srcStride + 1) * 512;
    const uint64_t dstBytes = (uint64_t(p.repeatTimes - 1) * (1 + p.dstGap) + 1) * 512;
    check_cube_operand("LoadData", "src", src.sim_ptr, srcBytes, Mem::L1, 32, loc);
    check_cube_operand("LoadData", "dst", dst.sim_ptr, dstBytes, target, 512, loc);
    {
        RaceOp op(Pipe::MTE1, "LoadData", loc);
        op.read(reinterpret_cast<const uint8_t*>(src.sim_ptr) + uint64_t(p.startIndex) * 512, srcBytes - uint64_t(p.startIndex) * 512)
            .write(dst.sim_ptr, dstBytes);
    }
    const uint8_t* sb = reinterpret_cast<const uint8_t*>(src.sim_ptr);
    uint8_t* db = reinterpret_cast<uint8_t*>(dst.sim_ptr);
    for (uint32_t i = 0; i < p.repeatTimes; ++i) {
        const uint8_t* f = sb + (uint64_t(p.startIndex) + uint64_t(i) * p.srcStride) * 512;
        uint8_t* g = db + uint64_t(i) * (1 + p.dstGap) * 512;
        if (!p.ifTranspose) {
            std::memmove(g, f, 512);
        } else {
            uint16_t tmp[256];
            std::memcpy(tmp, f, 512);
            uint16_t* out = reinterpret_cast<uint16_t*>(g);
            for (uint32_t r = 0; r < 16; ++r)
                for (uint32_t c = 0; c < 16; ++c) out[c * 16 + r] = tmp[r * 16 + c];
        }
    }
    // 2-D load bandwidth on 2201: 256 B / cycle to L0A, 128 to L0B (ref_next §1.4, APPX Cube指令理论性能汇总 table 3)
    cnt().mte1Cycles += (uint64_t(p.repeatTimes) * 512 + (target == Mem::L0A ? 255 : 127)) / (target == Mem::L0A ? 256 : 128);
}

// C (L0C, Nz, float) = (cmatrixInitVal ? 0 : C) + A (L0A, Zz) x B (L0B, Zn) (M pipe). m, n, k in [0, 4095]
// (0: no-op); partial fractals are padded. T = float, U = S = half | bfloat16_t | float (A2). m = 1 is GEMV
// mode: A is read as a plain ND vector of k elements, not as Zz fractals (Mmad.md; the Matmul guide's GEMV
// page, atlas_ascendc_10_10019: "the 1 x K vector is processed as a 16 x 16 matrix"; ref_next §1.5).
template <typename T, typename U, typename S>
inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter, const MmadParams& p,
                 std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(std::is_same_v<T, float>, "ascend-sim: Mmad accumulates into float L0C (int8 -> int32 is not emulated)");
    static_assert(std::is_same_v<U, S> && (std::is_same_v<U, half> || std::is_same_v<U, bfloat16_t> || std::is_same_v<U, float>),
                  "ascend-sim: Mmad operands are half, bfloat16_t or float (A2, ref_next §7)");
    touch(loc);
    if (p.m > 4095 || p.n > 4095 || p.k > 4095) fatal("PARAM-RANGE", loc, "Mmad: m, n, k = %u, %u, %u must be <= 4095", p.m, p.n, p.k);
    if (p.m == 0 || p.n == 0 || p.k == 0) return;
    const uint32_t K0 = c0_of(sizeof(U));
    const uint32_t M1 = (p.m + 15) / 16, N1 = (p.n + 15) / 16, K1 = (p.k + K0 - 1) / K0;
    const bool gemv = p.m == 1;
    const uint64_t aBytes = gemv ? (uint64_t(p.k) * sizeof(U) + 511) / 512 * 512 : uint64_t(M1) * K1 * 512;
    check_cube_operand("Mmad", "fm", fm.sim_ptr, aBytes, Mem::L0A, 512, loc);
    check_cube_operand("Mmad", "filter", filter.sim_ptr, uint64_t(K1) * N1 * 512, Mem::L0B, 512, loc);
    check_cube_operand("Mmad", "dst", dst.sim_ptr, uint64_t(M1) * N1 * 1024, Mem::L0C, 1024, loc);
    const bool accumulate = p.isBias || !p.cmatrixInitVal;
    // consecutive Mmads on one L0C tile need PipeBarrier<PIPE_M> when (m/16)(n/16) < 10; larger tiles are
    // ordered by the hardware (Mmad.md; ref_next §1.5)
    if (M1 * N1 >= 10) race_barrier(PIPE_M);
    {
        RaceOp op(Pipe::M, "Mmad", loc);
        op.read(fm.sim_ptr, aBytes).read(filter.sim_ptr, uint64_t(K1) * N1 * 512);
        if (accumulate) op.read(dst.sim_ptr, uint64_t(M1) * N1 * 1024);
        op.write(dst.sim_ptr, uint64_t(M1) * N1 * 1024);
    }
    std::vector<float> a(size_t(p.m) * p.k), b(size_t(p.k) * p.n), c(size_t(p.m) * p.n);
    for (uint32_t i = 0; i < p.m; ++i)
        for (uint32_t q = 0; q < p.k; ++q)
            a[size_t(i) * p.k + q] = static_cast<float>(fm.sim_ptr[gemv ? q : ((i / 16) * K1 + q / K0) * 16 * K0 + (i % 16) * K0 + q % K0]);
    for (uint32_t q = 0; q < p.k; ++q)
        for (uint32_t j = 0; j < p.n; ++j)
            b[size_t(q) * p.n + j] = static_cast<float>(filter.sim_ptr[((q / K0) * N1 + j / 16) * 16 * K0 + (j % 16) * K0 + q % K0]);
    float* C = dst.sim_ptr;
    auto at = [M1](uint32_t i, uint32_t j) { return (size_t(j / 16) * M1 * 16 + i) * 16 + j % 16; };
    for (uint32_t i = 0; i < p.m; ++i)
        for (uint32_t j = 0; j < p.n; ++j) c[size_t(i) * p.n + j] = accumulate ? C[at(i, j)] : 0.0f;
    gemm_f32(c.data(), p.n, a.data(), p.k, b.data(), p.n, p.m, p.n, p.k);
    for (uint32_t i = 0; i < p.m; ++i)
        for (uint32_t j = 0; j < p.n; ++j) C[at(i, j)] = c[size_t(i) * p.n + j];
    Counters& cn = cnt();
    const uint64_t macs = uint64_t(M1) * 16 * N1 * 16 * K1 * K0;
    cn.cubeMacs += macs;
    cn.cubeMacsUseful += uint64_t(p.m) * p.n * p.k;
    if constexpr (std::is_same_v<U, float>) {
        cn.cubeMacsF32 += macs;
        cn.cubeMacsUsefulF32 += uint64_t(p.m) * p.n * p.k;
    }
}

// L0C (Nz, float) -> GM (FIX pipe): with CFG_ROW_MAJOR (NZ2ND) element (m, n) of the mSize x nSize block
// goes to dst[m * dstStride + n]; quantPre NoQuant / F322F16 / F322BF16 converts on the way out.
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p,
                    std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(std::is_same_v<U, float>, "ascend-sim: Fixpipe reads a float L0C");
    static_assert(config.nz2nd, "ascend-sim: only the NZ -> ND Fixpipe (CFG_ROW_MAJOR) is emulated");
    touch(loc);
    if (!(__NPU_ARCH__ == 2201)) fatal("UNSUPPORTED", loc, "Fixpipe (L0C -> GM) exists on A2 (2201) only; 310P moves L0C through UB");
    if (p.nSize == 0 || p.mSize == 0 || p.nSize > 4095 || p.mSize > 8192 || p.dstStride == 0) {
        fatal("PARAM-RANGE", loc, "Fixpipe: nSize = %u in [1, 4095], mSize = %u in [1, 8192] (NZ2ND) and dstStride = %u > 0 are required",
              p.nSize, p.mSize, p.dstStride);
    }
    if (p.quantPre != NoQuant && p.quantPre != F322F16 && p.quantPre != F322BF16) {
        fatal("UNSUPPORTED", loc, "Fixpipe: only NoQuant, F322F16 and F322BF16 are emulated");
    }
    const uint32_t N1 = (p.nSize + 15) / 16;
    const uint64_t srcBytes = (uint64_t(N1 - 1) * p.srcStride + p.mSize) * 16 * sizeof(float);
    check_cube_operand("Fixpipe", "src", src.sim_ptr, srcBytes, Mem::L0C, 64, loc);
    const uint64_t dstBytes = (uint64_t(p.mSize - 1) * p.dstStride + p.nSize) * sizeof(T);
    check_gm("Fixpipe", dst, 0, dstBytes, true, loc);
    {
        RaceOp op(Pipe::FIX, "Fixpipe", loc);
        op.read(src.sim_ptr, srcBytes);
    }
    // one ND row of nSize elements per M row, dstStride apart: Fixpipes writing interleaved rows touch no common byte
    race_strided(Pipe::FIX, "Fixpipe", loc, dst.sim_ptr, p.mSize, uint64_t(p.nSize) * sizeof(T), uint64_t(p.dstStride) * sizeof(T), true);
    // SetAtomicAdd<T> (ascendc.md "SetAtomicAdd": on A2 the L0C -> GM path adds too): each row is converted, then added
    // into GM (ATOMIC-UNINIT on the poison, as the UB -> GM path)
    auto* const add = st().atomicAdd;
    if (add != nullptr && add != &sim::detail::atomic_add_fn<T>) {
        fatal("PARAM-RANGE", loc, "Fixpipe under SetAtomicAdd: the atomic type set differs from the destination's (%zu-byte elements)",
              sizeof(T));
    }
    std::vector<T> tmp(add != nullptr ? p.nSize : 0);
    for (uint32_t m = 0; m < p.mSize; ++m) {
        T* row = dst.sim_ptr + uint64_t(m) * p.dstStride;
        T* out = add != nullptr ? tmp.data() : row;
        for (uint32_t n = 0; n < p.nSize; ++n) {
            float v = src.sim_ptr[(uint64_t(n / 16) * p.srcStride + m) * 16 + n % 16];
            if (p.reluEn && v < 0.0f) v = 0.0f;
            out[n] = static_cast<T>(v);
        }
        const uint64_t bytes = uint64_t(p.nSize) * sizeof(T);
        if (add == nullptr) {
            gm_mark_write("Fixpipe", row, bytes, loc);
        } else {
            add(row, tmp.data(), bytes, loc);
            st().cnt.atomicBytes += bytes;
            gm_mark_atomic("Fixpipe", row, bytes, loc);
        }
    }
    cnt().l0c2gm += uint64_t(p.mSize) * p.nSize * sizeof(T);
    cnt().l0c2gmN += 1;
    if (gm_in_workspace(dst.sim_ptr)) cnt().wsL0c2gm += uint64_t(p.mSize) * p.nSize * sizeof(T);
}

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_CUBE_H
